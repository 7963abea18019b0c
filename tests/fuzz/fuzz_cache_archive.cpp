// libFuzzer target: a cache entry archive imported into a scratch workspace's cache (LocalCache::begin_import),
// as a download would hand it over. The first byte picks the form: even, the rest is the archive as is;
// odd, the rest is gzipped here first, so that mutations reach the format inside rather than dying in
// the gzip checksum. The second byte says where the bytes are split in two chunks. An import that fails
// and leaves an entry or a build directory, or anything written outside .qk/cache, aborts (a finding).
#include <dirent.h>
#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "key/cache/entry_archive.hpp"
#include "qk/key/cache.hpp"

namespace {

// Entries in `dir` other than "." and "..".
int count_entries(const std::filesystem::path& dir)
{
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        std::abort();
    int n = 0;
    while (dirent* e = ::readdir(d))
        n += std::string_view(e->d_name) != "." && std::string_view(e->d_name) != "..";
    ::closedir(d);
    return n;
}

struct Scratch {
    std::filesystem::path root;
    qk::key::LocalCache cache;
};

Scratch& scratch()
{
    static Scratch* s = [] {
        std::string dir = (std::filesystem::temp_directory_path() / "qk-fuzz-archive-XXXXXX").string();
        if (!::mkdtemp(dir.data()))
            std::abort();
        auto cache = qk::key::LocalCache::open(dir);
        if (!cache)
            std::abort();
        // libFuzzer leaves through exit(): the scratch workspace goes with it.
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(scratch().root, ec);
        });
        return new Scratch{dir, std::move(*cache)};
    }();
    return *s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    // The hash the seed corpus was exported under (hash_bytes("fuzz")): meta.json must name it.
    static const qk::key::Hash128 hash = qk::key::hash_bytes("fuzz");
    Scratch& s = scratch();
    std::string_view rest(reinterpret_cast<const char*>(data) + 2, size - 2);
    std::string archive;
    if (data[0] & 1) {
        qk::key::ArchiveSink sink = [&](std::string_view chunk) {
            archive.append(chunk);
            return qk::Status();
        };
        qk::key::entry_archive::GzipWriter gz(sink);
        if (!gz.write(rest) || !gz.finish())
            std::abort();
    } else {
        archive = rest;
    }
    std::size_t split = archive.empty() ? 0 : data[1] % archive.size();

    qk::key::ArchiveLimits limits;
    limits.file_bytes = std::uint64_t{1} << 24;  // the fuzzer's disk and time are not an archive's to spend
    qk::key::EntryImport import = s.cache.begin_import(hash, limits);
    bool ok = import.write(std::string_view(archive).substr(0, split)) &&
              import.write(std::string_view(archive).substr(split)) && import.finish();
    struct stat st;
    bool entry = ::lstat((s.root / ".qk/cache" / hash.hex()).c_str(), &st) == 0;
    if (ok != entry || count_entries(s.root / ".qk/cache/tmp") != 0 || count_entries(s.root) != 1)
        std::abort();
    if (ok)
        s.cache.remove(hash);
    return 0;
}
