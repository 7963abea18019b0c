// A directory of ours that nobody else may write in: where qk keeps what a task must not reach or
// forge (sandboxes, the registry of them). In a shared /var/tmp another user could have made it first.
#pragma once

#include <sys/stat.h>

#include <filesystem>

#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce {

struct OwnDirectory {
    std::filesystem::path path;  // canonical
    UniqueFd fd;                 // O_PATH
    struct stat st {};
};

// Makes `dir` and its missing parents (mode 0700), and opens it; refuses one that is not ours or that
// others may write in. The error says why, without the path.
Result<OwnDirectory> open_own_directory(const std::filesystem::path& dir);

}  // namespace qk::enforce
