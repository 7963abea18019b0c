#include "cache_meta.hpp"

#include <cmath>
#include <ctime>

#include <fmt/format.h>

#include "qk/util/json_writer.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key::cache_meta {

using workspace::Json;

namespace {

// Appends `s` as a JSON string. False when `s` is not UTF-8, which a JSON string cannot carry unchanged.
bool append_string(std::string& out, std::string_view s)
{
    if (!JsonWriter::valid_utf8(s))
        return false;
    JsonWriter::escape(out, s);
    return true;
}

const char* kind_name(OutputFile::Kind k)
{
    switch (k) {
    case OutputFile::Kind::file: return "file";
    case OutputFile::Kind::symlink: return "symlink";
    case OutputFile::Kind::directory: return "directory";
    }
    return "file";
}

// A member read from meta.json, or an Error naming it.
struct Reader {
    const Json& object;
    std::string where;

    Result<const Json*> member(std::string_view key, Json::Kind kind, const char* expected) const
    {
        const Json* v = object.find(key);
        if (!v)
            return error(fmt::format("{}{} is missing", where, key));
        if (v->kind() != kind)
            return error(fmt::format("{}{} should be {}, found {}", where, key, expected, v->describe()));
        return v;
    }
    Result<std::string> string(std::string_view key) const
    {
        QK_TRY(v, member(key, Json::Kind::string, "a string"));
        return (*v)->as_string();
    }
    Result<std::uint64_t> count(std::string_view key) const
    {
        QK_TRY(v, member(key, Json::Kind::number, "a number"));
        double d = (*v)->as_number();
        if (d < 0 || d > 9007199254740992.0 || std::floor(d) != d)
            return error(fmt::format("{}{} should be a whole number, found {}", where, key, d));
        return static_cast<std::uint64_t>(d);
    }
};

Result<CachedFile> read_file_entry(const Json& item, std::size_t index)
{
    if (!item.is_object())
        return error(fmt::format("files[{}] should be an object, found {}", index, item.describe()));
    Reader r{item, fmt::format("files[{}].", index)};
    CachedFile f;
    auto path = r.string("path");
    auto kind = r.string("kind");
    if (!path)
        return path.error();
    if (!kind)
        return kind.error();
    f.path = *path;
    if (*kind == "file" || *kind == "directory") {
        f.kind = *kind == "file" ? OutputFile::Kind::file : OutputFile::Kind::directory;
        QK_TRY(mode, r.string("mode"));
        char* end = nullptr;
        unsigned long m = std::strtoul(mode->c_str(), &end, 8);
        if (mode->empty() || *end != '\0' || m > 07777)
            return error(fmt::format("files[{}].mode should be octal permission bits, found \"{}\"", index, *mode));
        f.mode = static_cast<std::uint32_t>(m);
    } else if (*kind == "symlink") {
        f.kind = OutputFile::Kind::symlink;
        QK_TRY(target, r.string("target"));
        f.target = *target;
    } else {
        return error(fmt::format("files[{}].kind \"{}\" is none of file, symlink, directory", index, *kind));
    }
    if (f.kind != OutputFile::Kind::directory) {
        QK_TRY(size, r.count("size"));
        f.size = *size;
    }
    if (f.kind == OutputFile::Kind::file) {
        // Entries stored before content hashes have none: unusable, so run again and stored with one.
        auto hex = r.string("hash");
        if (!hex)
            return error(fmt::format("files[{}] has no content hash (stored by an older qk)", index));
        auto hash = parse_hash(*hex);
        if (!hash)
            return error(fmt::format("files[{}].hash should be 32 hex digits, found \"{}\"", index, *hex));
        f.hash = *hash;
    }
    return f;
}

// The list of copies, meta.json's and warm.json's alike; `str` appends a JSON string.
template <class Str> void append_files(std::string& out, std::span<const CachedFile> files, Str&& str)
{
    auto it = std::back_inserter(out);
    for (std::size_t i = 0; i < files.size(); ++i) {
        const CachedFile& f = files[i];
        out += i ? ",\n    {\"path\": " : "\n    {\"path\": ";
        str(f.path);
        fmt::format_to(it, ", \"kind\": \"{}\"", kind_name(f.kind));
        if (f.kind == OutputFile::Kind::symlink) {
            out += ", \"target\": ";
            str(f.target);
        } else {
            fmt::format_to(it, ", \"mode\": \"{:04o}\"", f.mode);
        }
        if (f.kind != OutputFile::Kind::directory)
            fmt::format_to(it, ", \"size\": {}", f.size);
        if (f.kind == OutputFile::Kind::file)
            fmt::format_to(it, ", \"hash\": \"{}\"", f.hash.hex());
        out += '}';
    }
    out += files.empty() ? "]" : "\n  ]";
}

Result<std::vector<CachedFile>> read_files(const Reader& r)
{
    QK_TRY(files, r.member("files", Json::Kind::array, "an array"));
    std::vector<CachedFile> out;
    for (const Json& item : (*files)->as_array()) {
        QK_TRY(f, read_file_entry(item, out.size()));
        out.push_back(std::move(*f));
    }
    return out;
}

}  // namespace

Result<std::string> write(const Hash128& hash, const CacheRecord& record, std::span<const CachedFile> files,
                          std::uint64_t terminal_size, std::string_view created)
{
    std::string out;
    auto it = std::back_inserter(out);
    bool utf8 = true;
    auto str = [&](std::string_view s) { utf8 = append_string(out, s) && utf8; };
    fmt::format_to(it, "{{\n  \"schemaVersion\": {},\n  \"qkVersion\": ", LocalCache::schema_version);
    str(record.qk_version);
    fmt::format_to(it, ",\n  \"hash\": \"{}\",\n  \"task\": ", hash.hex());
    str(record.task);
    out += ",\n  \"outputs\": [";
    for (std::size_t i = 0; i < record.outputs.size(); ++i) {
        out += i ? ", " : "";
        str(record.outputs[i]);
    }
    out += "],\n  \"files\": [";
    append_files(out, files, str);
    fmt::format_to(it, ",\n  \"terminalOutputSize\": {},\n  \"durationMs\": {},\n  \"created\": ", terminal_size,
                   record.duration.count());
    str(created);
    out += "\n}\n";
    if (!utf8)
        return error(fmt::format("cannot cache {}: a path or pattern of its outputs is not valid UTF-8, which "
                                 "meta.json cannot record; rename the file",
                                 record.task));
    return out;
}

Result<Parsed> read(std::string_view text, const Hash128& hash)
{
    QK_TRY(doc, workspace::parse_json(text, "meta.json"));
    if (!doc->is_object())
        return error(fmt::format("meta.json should hold an object, found {}", doc->describe()));
    Reader r{*doc, ""};
    QK_TRY(schema, r.count("schemaVersion"));
    if (*schema != LocalCache::schema_version)
        return error(
            fmt::format("meta.json has schemaVersion {}, this qk reads {}", *schema, LocalCache::schema_version));
    Parsed p;
    p.hit.hash = hash;
    QK_TRY(stored_hash, r.string("hash"));
    if (*stored_hash != hash.hex())
        return error(fmt::format("meta.json is for hash {}", *stored_hash));
    for (auto [key, field] : {std::pair{"task", &p.hit.task}, std::pair{"qkVersion", &p.hit.qk_version},
                              std::pair{"created", &p.hit.created}}) {
        QK_TRY(v, r.string(key));
        *field = std::move(*v);
    }
    QK_TRY(outputs, r.member("outputs", Json::Kind::array, "an array"));
    for (const Json& o : (*outputs)->as_array()) {
        if (!o.is_string())
            return error(fmt::format("outputs should hold strings, found {}", o.describe()));
        p.hit.outputs.push_back(o.as_string());
    }
    QK_TRY(files, read_files(r));
    p.hit.files = std::move(*files);
    auto duration = r.count("durationMs");
    auto terminal = r.count("terminalOutputSize");
    if (!duration)
        return duration.error();
    if (!terminal)
        return terminal.error();
    p.hit.duration = std::chrono::milliseconds(*duration);
    p.terminal_size = *terminal;
    return p;
}

Result<std::string> write_warm(const WarmDoc& doc)
{
    std::string out;
    bool utf8 = true;
    auto str = [&](std::string_view s) { utf8 = append_string(out, s) && utf8; };
    fmt::format_to(std::back_inserter(out), "{{\n  \"schemaVersion\": {},\n  \"task\": ", LocalCache::schema_version);
    str(doc.task);
    out += ",\n  \"warm\": [";
    for (std::size_t i = 0; i < doc.warm.size(); ++i) {
        out += i ? ", " : "";
        str(doc.warm[i]);
    }
    out += "],\n  \"files\": [";
    append_files(out, doc.files, str);
    out += "\n}\n";
    if (!utf8)
        return error("a path of its warm state is not valid UTF-8, which warm.json cannot record");
    return out;
}

Result<WarmDoc> read_warm(std::string_view text)
{
    QK_TRY(doc, workspace::parse_json(text, "warm.json"));
    if (!doc->is_object())
        return error(fmt::format("warm.json should hold an object, found {}", doc->describe()));
    Reader r{*doc, ""};
    QK_TRY(schema, r.count("schemaVersion"));
    if (*schema != LocalCache::schema_version)
        return error(fmt::format("warm.json has schemaVersion {}, this qk reads {}", *schema, LocalCache::schema_version));
    WarmDoc w;
    QK_TRY(task, r.string("task"));
    w.task = std::move(*task);
    QK_TRY(warm, r.member("warm", Json::Kind::array, "an array"));
    for (const Json& o : (*warm)->as_array()) {
        if (!o.is_string())
            return error(fmt::format("warm should hold strings, found {}", o.describe()));
        w.warm.push_back(o.as_string());
    }
    QK_TRY(files, read_files(r));
    w.files = std::move(*files);
    return w;
}

Status check_provenance(std::string_view text)
{
    QK_TRY(doc, workspace::parse_json(text, "provenance.json"));
    if (!doc->is_object())
        return error(fmt::format("provenance.json should hold an object, found {}", doc->describe()));
    return {};
}

std::string now_utc()
{
    auto now = std::chrono::system_clock::now();
    std::time_t secs = std::chrono::system_clock::to_time_t(now);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::gmtime_r(&secs, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    return fmt::format("{}.{:03}Z", buf, ms);
}

}  // namespace qk::key::cache_meta
