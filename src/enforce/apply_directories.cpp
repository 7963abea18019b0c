// The directory half of apply(): directory changes taken whole or entry by entry, and removals.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "applier.hpp"
#include "place.hpp"
#include "qk/util/unique_fd.hpp"
#include "tree_ops.hpp"

namespace qk::enforce::detail {

using tree::join;
using tree::name_of;
using tree::parent_of;

Result<std::size_t> Applier::directory(std::size_t i)
{
    const Change& c = changes_[i];
    const std::size_t end = end_[i];
    if (kept_in(i) == size_of(i)) {
        auto w = whole(i);
        if (!w)
            return w.error();
        if (*w != Whole::merge)
            return end;
    }
    const bool replaced = c.kind == ChangeKind::replaced_directory;
    const bool may_change = may_hold_outputs(c.path);
    if (replaced && may_change) {
        // The task emptied this directory before writing its new content: take out of the workspace's
        // what it may remove, before the kept new entries come in.
        auto ws = ws_.open(c.path);
        if (ws.fd >= 0) {
            auto up = up_dir(c.path);
            if (!up)
                return up.error();
            if (auto s = prune(ws.fd, c.path, *up); !s)
                return s.error();
            ws_.forget(c.path);
        }
    }
    if (kept_in(i) == 0) {
        if (replaced && may_change && size_of(i) == 1)
            ++result_.applied;  // emptied, and nothing new written in it: the emptying was the change
        else
            discard(c.path, c.kind);
        return end;
    }
    // Part of it is kept: the entries beneath come one by one. The directory itself is made now only when
    // it is kept itself; otherwise the first kept entry under it makes it (keep(path, true)).
    if (kept(i)) {
        auto ws = ensure_ws_dir(c.path);
        if (!ws)
            return ws.error();
        if (ws->refused) {
            discard(c.path, c.kind);
            return end;
        }
        ++result_.applied;
    }
    return i + 1;
}

Result<Applier::Whole> Applier::whole(std::size_t i)
{
    const Change& c = changes_[i];
    // Overlay metadata goes before the move, so the workspace never shows it, even for an instant.
    for (std::size_t j = i; j < end_[i]; ++j) {
        const std::string& path = changes_[j].path;
        auto up = up_dir(parent_of(path));
        if (!up)
            return up.error();
        if (auto s = tree::strip_overlay_xattrs(*up, std::string(name_of(path)), path); !s)
            return s.error();
    }
    auto ws = ensure_ws_dir(parent_of(c.path));
    if (!ws)
        return ws.error();
    if (ws->refused) {
        discard(c.path, c.kind);
        return Whole::refused;
    }
    const std::string name(name_of(c.path));
    if (c.kind == ChangeKind::created_directory) {
        // A directory there now that the upper layer was not made over (another command's outputs,
        // applied since, or one a replaced parent held): merge into it rather than drop what it holds.
        struct stat st;
        if (::fstatat(ws->fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
            return Whole::merge;
    }
    auto up = up_dir(parent_of(c.path));
    if (!up)
        return up.error();
    if (auto s = place(*up, name, ws->fd, name, c.path, trash_); !s)
        return s.error();
    ws_.forget(c.path);
    up_.forget(c.path);
    result_.applied += size_of(i);
    return Whole::moved;
}

Status Applier::removal(std::size_t i)
{
    const std::string& rel = changes_[i].path;
    const std::string name(name_of(rel));
    auto parent = ws_.open(parent_of(rel));
    struct stat st;
    if (parent.fd < 0 || ::fstatat(parent.fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
        return {};  // nothing there reachable without a link, so nothing to remove
    if (kept(i)) {
        if (auto s = trash_.dispose(parent.fd, name, rel); !s)
            return s;
        ws_.forget(rel);
        ++result_.applied;
        return {};
    }
    if (!S_ISDIR(st.st_mode) || !keep_(rel, true)) {
        discard(rel, ChangeKind::removed);
        return {};
    }
    // A directory removed that is no output but holds some: remove the outputs in it, and it if that
    // leaves it empty.
    auto dir = ws_.open(rel);
    if (dir.fd < 0)
        return sys_error(fmt::format("cannot open {} in the workspace", rel), dir.err);
    if (auto s = prune(dir.fd, rel, -1); !s)
        return s;
    ws_.forget(rel);
    parent = ws_.open(parent_of(rel));
    if (parent.fd >= 0 && ::unlinkat(parent.fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOTEMPTY &&
        errno != EEXIST && errno != ENOENT)
        return sys_error(fmt::format("cannot remove directory {}", rel));
    ++result_.applied;
    return {};
}

Status Applier::prune(int dir_fd, const std::string& rel, int up_fd)
{
    auto entries = tree::list_dir(dir_fd);
    if (!entries)
        return sys_error(fmt::format("cannot list {} in the workspace", rel), entries.error().sys_errno);
    for (const tree::DirEntry& e : *entries) {
        const std::string child = join(rel, e.name);
        struct stat st, up_st;
        if (::fstatat(dir_fd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        const bool in_upper = up_fd >= 0 && ::fstatat(up_fd, e.name.c_str(), &up_st, AT_SYMLINK_NOFOLLOW) == 0 &&
                              !tree::is_whiteout(up_fd, e.name, up_st);
        if (in_upper) {
            // The upper's entry replaces this one if kept. Two directories: the upper's holds the whole
            // content (its parent was emptied), so what this one holds beyond it was removed.
            if (S_ISDIR(st.st_mode) && S_ISDIR(up_st.st_mode) && may_hold_outputs(child)) {
                UniqueFd ws_sub(::openat(dir_fd, e.name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                UniqueFd up_sub(::openat(up_fd, e.name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                if (!ws_sub.valid() || !up_sub.valid())
                    return sys_error(fmt::format("cannot open {}", child));
                if (auto s = prune(ws_sub.get(), child, up_sub.get()); !s)
                    return s;
            }
            continue;
        }
        if (keep_(child, false)) {
            if (auto s = trash_.dispose(dir_fd, e.name, child); !s)
                return s;
            continue;
        }
        if (!S_ISDIR(st.st_mode) || !keep_(child, true)) {
            discard(child, ChangeKind::removed);
            continue;
        }
        UniqueFd sub(::openat(dir_fd, e.name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid())
            return sys_error(fmt::format("cannot open {} in the workspace", child));
        if (auto s = prune(sub.get(), child, -1); !s)
            return s;
        sub.reset();
        if (::unlinkat(dir_fd, e.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOTEMPTY && errno != EEXIST)
            return sys_error(fmt::format("cannot remove directory {}", child));
    }
    return {};
}

}  // namespace qk::enforce::detail
