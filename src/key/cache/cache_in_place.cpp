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

bool same_bytes(const fs::path& a, const fs::path& b, std::uint64_t size)
{
    UniqueFd fa(::open(a.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    UniqueFd fb(::open(b.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fa.valid() || !fb.valid())
        return false;
    std::array<char, 64 * 1024> ba, bb;
    std::uint64_t left = size;
    while (left > 0) {
        ssize_t na = ::read(fa.get(), ba.data(), ba.size());
        if (na <= 0)
            return false;
        std::size_t got = 0;
        while (got < static_cast<std::size_t>(na)) {
            ssize_t nb = ::read(fb.get(), bb.data() + got, static_cast<std::size_t>(na) - got);
            if (nb <= 0)
                return false;
            got += static_cast<std::size_t>(nb);
        }
        if (std::memcmp(ba.data(), bb.data(), got) != 0)
            return false;
        left -= got > left ? left : got;
    }
    char extra;
    return ::read(fa.get(), &extra, 1) == 0;
}

}  // namespace

bool outputs_in_place(const LocalCache& cache, const CacheHit& hit)
{
    auto on_disk = collect_output_files(cache.workspace_root(), hit.outputs);
    if (!on_disk || on_disk->size() != hit.files.size())
        return false;
    const fs::path stored = cache.dir() / hit.hash.hex() / "files";
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
            if ((st.st_mode & 07777) != want.mode || static_cast<std::uint64_t>(st.st_size) != want.size ||
                !same_bytes(here, stored / want.path, want.size))
                return false;
            break;
        }
    }
    return true;
}

}  // namespace qk::key
