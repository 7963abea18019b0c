#include "qk/key/cache_in_place.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstring>

#include "qk/util/unique_fd.hpp"

namespace qk::key {

namespace {

namespace fs = std::filesystem;

}  // namespace

bool outputs_in_place(const LocalCache& cache, const CacheHit& hit, FileIndex* stamps)
{
    auto on_disk = collect_output_files(cache.workspace_root(), hit.outputs);
    if (!on_disk || on_disk->size() != hit.files.size())
        return false;
    for (std::size_t i = 0; i < hit.files.size(); ++i) {
        const CachedFile& want = hit.files[i];
        const OutputFile& have = (*on_disk)[i];
        if (have.path != want.path || have.kind != want.kind)
            return false;
        fs::path here = cache.workspace_root() / have.path;
        struct stat st;
        if (::lstat(here.c_str(), &st) != 0)
            return false;
        switch (want.kind) {
        case OutputFile::Kind::directory:
            break;
        case OutputFile::Kind::symlink: {
            std::error_code ec;
            if (fs::read_symlink(here, ec).string() != want.target || ec)
                return false;
            break;
        }
        case OutputFile::Kind::file:
            // Against the hash stored with the entry, not the cached copy: a copy tampered with since
            // must not make good outputs look out of place (and be overwritten by it).
            if ((st.st_mode & 07777) != want.mode || static_cast<std::uint64_t>(st.st_size) != want.size)
                return false;
            if (auto hash = stamps ? stamps->hash_elsewhere(have.path, st) : hash_file(here); !hash || *hash != want.hash)
                return false;
            break;
        }
    }
    return true;
}

}  // namespace qk::key
