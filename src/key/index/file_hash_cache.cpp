// The cache file is binary, native-endian (it never leaves the machine), checksummed as a whole:
//   "qkfhash\0"  u32 version  u32 0  u64 count
//   count x { u32 path length, u32 mode, u64 size, u64 inode, i64 mtime ns, i64 ctime ns,
//             u64 hash high, u64 hash low, path bytes }
//   u64 u64: XXH3-128 of everything before it
// A torn write, another version or a foreign file fails the checks and the cache counts as empty.
#include "file_hash_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::key {

namespace {

constexpr char magic[8] = {'q', 'k', 'f', 'h', 'a', 's', 'h', '\0'};
constexpr std::uint32_t version = 1;
constexpr std::size_t header_size = 8 + 4 + 4 + 8;
constexpr std::size_t entry_fixed = 4 + 4 + 8 * 6;
constexpr std::size_t trailer_size = 16;

template <class T> void put(std::string& out, T v)
{
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T> T get(const char* p)
{
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

std::int64_t ns(const struct timespec& t)
{
    return std::int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// mkdir that tolerates an existing directory; says whether it made it.
Status ensure_dir(const std::filesystem::path& dir, bool* created)
{
    if (::mkdir(dir.c_str(), 0777) == 0) {
        if (created)
            *created = true;
        return {};
    }
    struct stat st;
    if (errno == EEXIST && ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        return {};
    return sys_error(fmt::format("cannot create the directory {}", dir.string()));
}

}  // namespace

FileStamp FileStamp::of(const struct stat& st)
{
    return FileStamp{static_cast<std::uint64_t>(st.st_size), static_cast<std::uint64_t>(st.st_ino), ns(st.st_mtim),
                     ns(st.st_ctim), static_cast<std::uint32_t>(st.st_mode)};
}

HashCacheFile read_hash_cache(const std::filesystem::path& file)
{
    HashCacheFile result;
    UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid())
        return result;
    result.present = true;
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return result;
    // The cache's own mtime is when it was written, on the same clock as the files' mtimes.
    const std::int64_t written = ns(st.st_mtim);
    if (!read_all(fd.get(), result.data, static_cast<std::size_t>(st.st_size) + 1)) {
        result.data.clear();
        return result;
    }
    const std::string& d = result.data;
    if (d.size() < header_size + trailer_size || std::memcmp(d.data(), magic, sizeof magic) != 0 ||
        get<std::uint32_t>(d.data() + 8) != version)
        return result;
    const std::size_t body = d.size() - trailer_size;
    Hash128 sum = hash_bytes(std::string_view(d.data(), body));
    if (get<std::uint64_t>(d.data() + body) != sum.high || get<std::uint64_t>(d.data() + body + 8) != sum.low)
        return result;

    const std::uint64_t count = get<std::uint64_t>(d.data() + 16);
    if (count > body / entry_fixed)
        return result;
    result.entries.reserve(static_cast<std::size_t>(count));
    std::size_t pos = header_size;
    for (std::uint64_t i = 0; i < count; ++i) {
        if (body - pos < entry_fixed)
            break;
        const char* p = d.data() + pos;
        std::uint32_t len = get<std::uint32_t>(p);
        if (body - pos - entry_fixed < len)
            break;
        HashCacheFile::Entry e{static_cast<std::uint32_t>(pos + entry_fixed), len, {}};
        CachedHash& c = e.cached;
        c.stamp.mode = get<std::uint32_t>(p + 4);
        c.stamp.size = get<std::uint64_t>(p + 8);
        c.stamp.inode = get<std::uint64_t>(p + 16);
        c.stamp.mtime_ns = get<std::int64_t>(p + 24);
        c.stamp.ctime_ns = get<std::int64_t>(p + 32);
        c.hash.high = get<std::uint64_t>(p + 40);
        c.hash.low = get<std::uint64_t>(p + 48);
        c.valid = true;
        pos += entry_fixed + len;
        if (c.stamp.mtime_ns >= written - racy_window_ns)
            ++result.racy;
        else
            result.entries.push_back(e);
    }
    if (pos != body) {
        // Bounds that do not add up: nothing of it is trusted.
        result.entries.clear();
        result.racy = 0;
        return result;
    }
    result.usable = true;
    return result;
}

Status write_hash_cache(const std::filesystem::path& root, const std::filesystem::path& file,
                        const std::vector<HashCacheEntry>& entries)
{
    auto fail = [&](const Error& e) {
        return error(fmt::format("cannot write the file hash cache {}: {}; check that the directory is writable "
                                 "(the cache only saves time: deleting it is safe)",
                                 file.string(), e.message));
    };
    bool created_qk = false;
    if (Status s = ensure_dir(root / ".qk", &created_qk); !s)
        return fail(s.error());
    if (created_qk) {
        // qk's state never belongs in Git; only the process that made .qk writes this, so a user's edit stays.
        UniqueFd ign(::open((root / ".qk/.gitignore").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
        if (ign.valid()) {
            if (Status s = write_all(ign.get(), "*\n"); !s)
                return fail(s.error());
        } else if (errno != EEXIST) {
            return fail(sys_error("cannot create .qk/.gitignore"));
        }
    }
    for (auto dir = root / ".qk"; const auto& part : file.parent_path().lexically_relative(dir)) {
        if (part == ".")
            continue;
        dir /= part;
        if (Status s = ensure_dir(dir, nullptr); !s)
            return fail(s.error());
    }

    std::string out;
    std::size_t bytes = header_size + trailer_size;
    for (const auto& e : entries)
        bytes += entry_fixed + e.path.size();
    out.reserve(bytes);
    out.append(magic, sizeof magic);
    put(out, version);
    put(out, std::uint32_t{0});
    put(out, static_cast<std::uint64_t>(entries.size()));
    for (const auto& e : entries) {
        const CachedHash& c = *e.cached;
        put(out, static_cast<std::uint32_t>(e.path.size()));
        put(out, c.stamp.mode);
        put(out, c.stamp.size);
        put(out, c.stamp.inode);
        put(out, c.stamp.mtime_ns);
        put(out, c.stamp.ctime_ns);
        put(out, c.hash.high);
        put(out, c.hash.low);
        out.append(e.path);
    }
    Hash128 sum = hash_bytes(out);
    put(out, sum.high);
    put(out, sum.low);

    // Without an fsync a crash can leave a torn cache, which the checksum turns into an empty one.
    if (Status s = write_file_atomically(file.string(), out, {.mode = 0644, .durable = false}); !s)
        return fail(s.error());
    return {};
}

}  // namespace qk::key
