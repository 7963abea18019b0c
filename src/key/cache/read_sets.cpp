#include "qk/key/read_sets.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include <fmt/format.h>

#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"
#include "qk/util/json_writer.hpp"
#include "qk/util/path_within.hpp"
#include "qk/workspace/workspace.hpp"
#include "cache_fs.hpp"
#include "cache_meta.hpp"

namespace qk::key {

using workspace::Json;

Hash128 ReadSet::digest() const
{
    Hasher h;
    h.field(std::uint64_t{reads.size()});
    for (const RecordedRead& r : reads) {
        h.field(r.path);
        h.field(std::uint64_t{r.content.has_value()});
        if (r.content)
            h.field(*r.content);
    }
    return h.digest();
}

void write_read_set(JsonWriter& w, const ReadSet& set)
{
    w.begin_object().key("result").value(set.result.hex()).key("created").value(set.created);
    w.key("reads").begin_array();
    for (const RecordedRead& r : set.reads) {
        w.begin_object().key("path").value(r.path).key("hash");
        if (r.content)
            w.value(r.content->hex());
        else
            w.null();
        w.end_object();
    }
    w.end_array().end_object();
}

Hash128 ReadSet::result_key(const Hash128& declared) const
{
    return Hasher().field("qk read set").field(declared).field(digest()).digest();
}

Result<std::optional<Hash128>> current_content(const std::filesystem::path& root, const std::string& path)
{
    std::filesystem::path full = root / path;
    struct stat st {};
    if (::stat(full.c_str(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR)
            return std::optional<Hash128>{};
        return sys_error(fmt::format("cannot look at {}", path));
    }
    if (S_ISDIR(st.st_mode))
        return std::optional<Hash128>{};
    QK_TRY(h, hash_file(full));
    return std::optional<Hash128>{*h};
}

std::optional<std::string> first_changed(const ReadSet& set, const std::filesystem::path& root)
{
    for (const RecordedRead& r : set.reads) {
        auto now = current_content(root, r.path);
        if (!now)
            return fmt::format("{} cannot be read ({})", r.path, now.error().message);
        if (*now == r.content)
            continue;
        const char* how = !r.content ? "appeared" : !*now ? "was removed" : "changed";
        return fmt::format("{} {}", r.path, how);
    }
    return std::nullopt;
}

ReadSetStore ReadSetStore::open(const std::filesystem::path& cache_dir)
{
    return ReadSetStore(cache_dir / "read-sets");
}

ReadSetStore::ReadSetStore(std::filesystem::path dir) : dir_(std::move(dir)), listing_(std::make_shared<Listing>()) {}

std::filesystem::path ReadSetStore::file(const Hash128& declared) const
{
    return dir_ / (declared.hex() + ".json");
}

namespace {

Result<ReadSet> read_set(const Json& item)
{
    const Json* result = item.find("result");
    const Json* reads = item.find("reads");
    const Json* created = item.find("created");
    if (!result || !result->is_string() || !reads || !reads->is_array())
        return error("a set needs a result hash and an array of reads");
    ReadSet set;
    auto hash = parse_hash(result->as_string());
    if (!hash)
        return error(fmt::format("\"{}\" is not a hash", result->as_string()));
    set.result = *hash;
    if (created && created->is_string())
        set.created = created->as_string();
    for (const Json& r : reads->as_array()) {
        const Json* path = r.find("path");
        const Json* content = r.find("hash");
        if (!path || !path->is_string() || !content || !(content->is_string() || content->is_null()))
            return error("a read needs a path and a hash (null when it did not exist)");
        // A workspace path as recorded_reads writes it: never absolute, never climbing out.
        const std::string& rel = path->as_string();
        if (!qk::is_plain_relative(rel))
            return error(fmt::format("\"{}\" is not a path inside the workspace", rel));
        RecordedRead read{rel, std::nullopt};
        if (content->is_string()) {
            read.content = parse_hash(content->as_string());
            if (!read.content)
                return error(fmt::format("\"{}\" is not a hash", content->as_string()));
        }
        set.reads.push_back(std::move(read));
    }
    return set;
}

std::string manifest_json(const std::string& task, const std::vector<ReadSet>& sets)
{
    JsonWriter w(1);
    w.begin_object();
    w.key("schemaVersion").value(ReadSetStore::schema_version);
    w.key("task").value(task);
    w.key("sets").begin_array();
    for (const ReadSet& s : sets)
        write_read_set(w, s);
    w.end_array().end_object();
    return std::move(w).take_line();
}

}  // namespace

Result<std::vector<ReadSet>> ReadSetStore::sets(const Hash128& declared) const
{
    // Most keys have none: one listing of the directory answers them all, where a failed open each
    // would cost a system call per task of a cached run.
    {
        std::lock_guard lock(listing_->mutex);
        if (!listing_->read) {
            listing_->read = true;
            std::error_code ec;
            for (const auto& e : std::filesystem::directory_iterator(dir_, ec))
                listing_->names.insert(e.path().filename().string());
        }
        if (!listing_->names.count(declared.hex() + ".json"))
            return std::vector<ReadSet>{};
    }
    std::filesystem::path path = file(declared);
    auto text = read_file(path.string());
    if (!text) {
        if (text.error().sys_errno == ENOENT)
            return std::vector<ReadSet>{};
        return text.error();
    }
    auto fail = [&](const std::string& why) -> Error {
        std::error_code ec;
        std::filesystem::remove(path, ec);
        return error(fmt::format("the read sets in {} cannot be used ({}) and were removed", path.string(), why));
    };
    auto doc = workspace::parse_json(*text, path.string());
    if (!doc)
        return fail(doc.error().message);
    const Json* version = doc->find("schemaVersion");
    const Json* sets = doc->find("sets");
    if (!version || version->kind() != Json::Kind::number || version->as_number() != schema_version || !sets ||
        !sets->is_array())
        return fail(fmt::format("not a schemaVersion {} manifest", schema_version));
    std::vector<ReadSet> out;
    for (const Json& item : sets->as_array()) {
        auto set = read_set(item);
        if (!set)
            return fail(set.error().message);
        out.push_back(std::move(*set));
    }
    return out;
}

Status ReadSetStore::add(const Hash128& declared, const std::string& task, ReadSet set)
{
    auto sets = this->sets(declared);
    std::vector<ReadSet> kept = sets ? std::move(*sets) : std::vector<ReadSet>{};
    kept.erase(std::remove_if(kept.begin(), kept.end(), [&](const ReadSet& s) { return s.reads == set.reads; }),
               kept.end());
    if (set.created.empty())
        set.created = cache_meta::now_utc();
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec)
        return error(fmt::format("cannot create {}: {}", dir_.string(), ec.message()));
    kept.insert(kept.begin(), std::move(set));
    if (kept.size() > max_sets)
        kept.resize(max_sets);
    // Not synced, as cache entries are not: a manifest a crash left torn fails to parse and is removed.
    QK_TRY_STATUS(write_file_atomically(file(declared).string(), manifest_json(task, kept), {.durable = false}));
    std::lock_guard lock(listing_->mutex);
    listing_->names.insert(declared.hex() + ".json");
    return {};
}

}  // namespace qk::key
