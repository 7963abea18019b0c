#include "trash.hpp"

#include <fcntl.h>
#include <stdio.h>

#include <fmt/format.h>

#include "tree_ops.hpp"

namespace qk::enforce {

Trash::Trash(int dir_fd) : fd_(dir_fd), prefix_(tree::random_name("")) {}

Status Trash::dispose(int dirfd, const std::string& name, std::string_view shown)
{
    while (fd_ >= 0) {
        const std::string slot = fmt::format("{}-{}", prefix_, next_++);
        if (::renameat2(dirfd, name.c_str(), fd_, slot.c_str(), RENAME_NOREPLACE) == 0 || errno == ENOENT)
            return {};
        if (errno == EXDEV)
            break;  // another filesystem: delete instead
        if (errno != EEXIST)
            return sys_error(fmt::format("cannot move {} out of the way", shown));
        prefix_ = tree::random_name("");
    }
    return tree::remove_tree(dirfd, name, shown);
}

}  // namespace qk::enforce
