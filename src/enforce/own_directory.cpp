#include "own_directory.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

namespace qk::enforce {

namespace fs = std::filesystem;

Result<OwnDirectory> open_own_directory(const fs::path& dir)
{
    std::error_code ec;
    fs::path path = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    if (ec)
        return error(fmt::format("cannot resolve it: {}", ec.message()));
    fs::path made;
    for (const fs::path& part : path) {
        made /= part;
        if (::mkdir(made.c_str(), 0700) != 0 && errno != EEXIST)
            return sys_error(fmt::format("cannot create {}", made.string()));
    }
    OwnDirectory out;
    out.path = fs::canonical(path, ec);
    if (ec)
        return error(fmt::format("cannot resolve it: {}", ec.message()));
    out.fd.reset(::open(out.path.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!out.fd.valid() || ::fstat(out.fd.get(), &out.st) != 0)
        return sys_error("cannot open it");
    if (out.st.st_uid != ::geteuid())
        return error(fmt::format("it belongs to uid {}, not to us (uid {})", out.st.st_uid, ::geteuid()));
    if ((out.st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return error(fmt::format("others may write in it (mode {:o})", out.st.st_mode & 07777));
    return out;
}

}  // namespace qk::enforce
