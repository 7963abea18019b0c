#include "dir_stack.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "qk/util/path_within.hpp"

namespace qk::enforce {

namespace {

int open_beneath(int dirfd, const std::string& name)
{
    open_how how{};
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
    for (;;) {
        long fd = ::syscall(SYS_openat2, dirfd, name.c_str(), &how, sizeof how);
        if (fd >= 0 || errno != EAGAIN)  // EAGAIN: a concurrent rename somewhere; the kernel asks to retry
            return static_cast<int>(fd);
    }
}

}  // namespace

DirStack::Opened DirStack::open(std::string_view rel, const Repair& repair)
{
    while (!stack_.empty() && !is_within(rel, stack_.back().first))
        stack_.pop_back();
    std::size_t done = stack_.empty() ? 0 : stack_.back().first.size();
    while (done < rel.size()) {
        const std::size_t start = done == 0 ? 0 : done + 1;
        std::size_t end = rel.find('/', start);
        if (end == std::string_view::npos)
            end = rel.size();
        const std::string name(rel.substr(start, end - start));
        const std::string_view prefix = rel.substr(0, end);
        const int parent = stack_.empty() ? root_ : stack_.back().second.get();
        int fd = open_beneath(parent, name);
        if (fd < 0) {
            int err = errno;
            if (err == EXDEV)
                err = ELOOP;  // RESOLVE_BENEATH reports a component it would not follow this way
            if (!repair || (err != ENOENT && err != ELOOP && err != ENOTDIR) || !repair(parent, prefix, name, err))
                return {-1, err, std::string(prefix)};
            fd = open_beneath(parent, name);
            if (fd < 0)
                return {-1, errno, std::string(prefix)};
        }
        stack_.emplace_back(std::string(prefix), UniqueFd(fd));
        done = end;
    }
    return {stack_.empty() ? root_ : stack_.back().second.get(), 0, {}};
}

void DirStack::forget(std::string_view rel)
{
    // The stack is one path, so what lies at or under `rel` is a suffix of it.
    auto it = std::find_if(stack_.begin(), stack_.end(), [&](const auto& e) { return is_within(e.first, rel); });
    stack_.erase(it, stack_.end());
}

}  // namespace qk::enforce
