// Trash: where apply() puts what it takes out of the workspace (entries the task replaced or removed)
// instead of deleting it there and then. Deleting frees every inode and block, which on some
// filesystems (ext4 with online discard) costs milliseconds per file; a rename costs microseconds, and
// the trash is deleted later, off the task's critical path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk::enforce {

class Trash {
public:
    // `dir_fd`: an open directory, or -1 to delete at once.
    explicit Trash(int dir_fd);

    // Takes `name` in `dirfd` away: renamed into the trash, or deleted (never following a link) when
    // there is no trash or it is on another filesystem. `shown` names it in errors.
    Status dispose(int dirfd, const std::string& name, std::string_view shown);

private:
    int fd_;
    std::string prefix_;  // random, so applies sharing a trash do not collide
    std::uint64_t next_ = 0;
};

}  // namespace qk::enforce
