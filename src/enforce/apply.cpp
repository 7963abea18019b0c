#include "qk/enforce/apply.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "applier.hpp"
#include "place.hpp"
#include "qk/util/io.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/unique_fd.hpp"
#include "tree_ops.hpp"

namespace qk::enforce {

namespace detail {

using tree::name_of;
using tree::parent_of;

namespace {
bool is_directory_change(ChangeKind k)
{
    return k == ChangeKind::created_directory || k == ChangeKind::replaced_directory;
}
}  // namespace

Result<ApplyResult> Applier::run()
{
    if (auto s = prepare(); !s)
        return s.error();
    for (std::size_t i = 0; i < changes_.size();) {
        auto next = step(i);
        if (!next)
            return with_message(next.error(),
                                fmt::format("cannot apply {}: {}; applying stopped there: the entries before it are "
                                            "in the workspace, it and those after it are not, so the task's outputs "
                                            "are incomplete; run the task again",
                                            changes_[i].path, next.error().message));
        i = *next;
    }
    return std::move(result_);
}

Status Applier::prepare()
{
    const std::size_t n = changes_.size();
    end_.assign(n, n);
    kept_before_.assign(n + 1, 0);
    std::vector<std::size_t> open;  // directory changes whose subtree the walk is in
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& path = changes_[i].path;
        if (!qk::is_plain_relative(path))
            return error(fmt::format("cannot apply \"{}\": not a plain workspace-relative path", path));
        while (!open.empty() && !qk::is_under(path, changes_[open.back()].path)) {
            end_[open.back()] = i;
            open.pop_back();
        }
        if (is_directory_change(changes_[i].kind))
            open.push_back(i);
        else
            end_[i] = i + 1;
        auto kept = judge(i);
        if (!kept)
            return kept.error();
        kept_before_[i + 1] = kept_before_[i] + (*kept ? 1 : 0);
    }
    return {};
}

Result<bool> Applier::judge(std::size_t i)
{
    const Change& c = changes_[i];
    if (!keep_(c.path, false))
        return false;
    if (c.kind != ChangeKind::symlink || !may_link_)
        return true;
    auto up = up_dir(parent_of(c.path));
    if (!up)
        return up.error();
    auto target = read_link_at(*up, std::string(name_of(c.path)).c_str());
    if (!target)
        return sys_error(fmt::format("cannot read the symbolic link {} in the upper layer", c.path),
                         target.error().sys_errno);
    if (may_link_(c.path, *target))
        return true;
    refused_.emplace(i, std::move(*target));
    return false;
}

Result<std::size_t> Applier::step(std::size_t i)
{
    const Change& c = changes_[i];
    if (is_directory_change(c.kind))
        return directory(i);
    Status s = c.kind == ChangeKind::removed ? removal(i) : leaf(i);
    if (!s)
        return s.error();
    return i + 1;
}

Result<Applier::WsDir> Applier::ensure_ws_dir(std::string_view rel)
{
    bool refused = false;
    int failure = 0;
    auto repair = [&](int parent, std::string_view prefix, std::string_view name_view, int err) {
        if (!may_hold_outputs(prefix)) {
            refused = true;
            return false;
        }
        const std::string name(name_view);
        // ELOOP or ENOTDIR: a link or a file stands where the task made a directory; it goes. (A real
        // directory would have opened.)
        if (err != ENOENT) {
            if (auto s = trash_.dispose(parent, name, prefix); !s) {
                failure = s.error().sys_errno;
                return false;
            }
        }
        struct stat st;
        const std::string up_path(prefix);
        const mode_t mode = ::fstatat(up_root_, up_path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)
                                ? st.st_mode & 07777
                                : 0755;
        if (::mkdirat(parent, name.c_str(), 0700) != 0) {
            failure = errno;
            return false;
        }
        if (::fchmodat(parent, name.c_str(), mode, 0) != 0) {  // as the task left it, not as our umask would
            failure = errno;
            return false;
        }
        return true;
    };
    auto opened = ws_.open(rel, repair);
    if (opened.fd >= 0)
        return WsDir{opened.fd, false};
    if (refused)
        return WsDir{-1, true};
    return sys_error(fmt::format("cannot make directory {} in the workspace", opened.at),
                     failure != 0 ? failure : opened.err);
}

Result<int> Applier::up_dir(std::string_view rel)
{
    auto opened = up_.open(rel);
    if (opened.fd < 0)
        return sys_error(fmt::format("cannot open {} in the upper layer", rel.empty() ? "its root" : rel), opened.err);
    return opened.fd;
}

Result<bool> Applier::move_in(const std::string& rel)
{
    const std::string name(name_of(rel));
    auto up = up_dir(parent_of(rel));
    if (!up)
        return up.error();
    auto ws = ensure_ws_dir(parent_of(rel));
    if (!ws)
        return ws.error();
    if (ws->refused)
        return false;
    if (auto s = place(*up, name, ws->fd, name, rel, trash_); !s)
        return s.error();
    // What stood at `rel` in the workspace, and the upper's entry, are gone: drop any fd open on them.
    ws_.forget(rel);
    up_.forget(rel);
    return true;
}

Status Applier::leaf(std::size_t i)
{
    const Change& c = changes_[i];
    if (!kept(i)) {
        if (auto refused = refused_.find(i); refused != refused_.end())
            result_.refused_links.push_back({c.path, refused->second});
        else
            discard(c.path, c.kind);
        return {};
    }
    auto up = up_dir(parent_of(c.path));
    if (!up)
        return up.error();
    if (auto s = tree::strip_overlay_xattrs(*up, std::string(name_of(c.path)), c.path); !s)
        return s;
    auto moved = move_in(c.path);
    if (!moved)
        return moved.error();
    if (*moved)
        ++result_.applied;
    else
        discard(c.path, c.kind);
    return {};
}

}  // namespace detail

Result<ApplyResult> apply(int upper_fd, int workspace_fd, const std::vector<Change>& changes, const KeepFn& keep,
                          int trash_fd, const LinkFn& may_link)
{
    return detail::Applier(upper_fd, workspace_fd, changes, keep, trash_fd, may_link).run();
}

Result<ApplyResult> apply(const std::filesystem::path& upper_dir, const std::filesystem::path& workspace_root,
                          const std::vector<Change>& changes, const KeepFn& keep,
                          const std::filesystem::path& trash_dir, const LinkFn& may_link)
{
    UniqueFd up(::open(upper_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!up.valid())
        return sys_error(fmt::format("cannot open upper layer {}", upper_dir.string()));
    UniqueFd ws(::open(workspace_root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!ws.valid())
        return sys_error(fmt::format("cannot open workspace {}", workspace_root.string()));
    UniqueFd trash;
    if (!trash_dir.empty()) {
        trash.reset(::open(trash_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!trash.valid())
            return sys_error(fmt::format("cannot open trash directory {}", trash_dir.string()));
    }
    return apply(up.get(), ws.get(), changes, keep, trash.get(), may_link);
}

}  // namespace qk::enforce
