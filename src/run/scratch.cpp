// Scratch directories: resolving the entries, the rules they must keep, and emptying them. Emptying
// deletes without asking, so it trusts nothing checked earlier: it walks from the workspace root by file
// descriptors, refusing any symbolic link on the way, and deletes by unlinkat so nothing is followed.
#include "qk/run/scratch.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>

#include <fmt/format.h>

#include "qk/util/path_within.hpp"
#include "qk/util/special_names.hpp"
#include "qk/util/unique_fd.hpp"
#include "qk/workspace/tokens.hpp"

namespace qk::run {

namespace {

// .git, qk's state and installed packages are never emptied, whatever their names' case
// (qk/util/special_names.hpp).
const char* reserved(std::string_view component)
{
    switch (special_dir(component)) {
    case SpecialDir::git: return ".git";
    case SpecialDir::qk: return ".qk";
    case SpecialDir::node_modules: return "node_modules";
    case SpecialDir::none: break;
    }
    return nullptr;
}

std::vector<std::string> components(std::string_view path)
{
    std::vector<std::string> out;
    for (std::size_t at = 0; at <= path.size();) {
        std::size_t slash = std::min(path.find('/', at), path.size());
        if (slash > at)
            out.emplace_back(path.substr(at, slash - at));
        at = slash + 1;
    }
    return out;
}

// Characters with a meaning in Nx's globs (classes, braces, extglob groups, negation, escapes): an entry
// holding one could name many directories or none, and qk empties exactly one.
constexpr std::string_view glob_chars = "*?[](){}!\\";

Result<std::string> resolve_entry(const workspace::Project& project, const std::string& task,
                                  const std::string& written)
{
    auto refuse = [&](std::string why) {
        return error(fmt::format("{}: scratch entry \"{}\" {}", task, written, why));
    };
    if (written.starts_with('/'))
        return refuse("is an absolute path, which may lie outside the workspace; write it from the workspace "
                      "root, as \"{workspaceRoot}/tmp/cache\", or from the project, as \"{projectRoot}/.cache\"");
    workspace::TokenPolicy policy;
    policy.other = workspace::TokenPolicy::Other::refuse;
    auto r = workspace::resolve_tokens(written, project, policy);
    if (!r) {
        if (r.error().kind == ErrorKind::workspace_root_without_slash)
            return refuse("must have a / after {workspaceRoot}, as \"{workspaceRoot}/tmp/cache\"");
        return refuse(r.error().message + ": a scratch entry names one directory, as a plain path");
    }
    // What the entry itself spells, its tokens aside (a project's name may hold any character).
    std::string spelled = written;
    for (std::string_view token : {"{workspaceRoot}", "{projectRoot}", "{projectName}"})
        for (std::size_t at = spelled.find(token); at != std::string::npos; at = spelled.find(token, at))
            spelled.erase(at, token.size());
    if (auto c = spelled.find_first_of(glob_chars); c != std::string::npos)
        return refuse(fmt::format("holds the glob character '{}': a scratch entry names one directory, as a "
                                  "plain path; list each directory as an entry of its own",
                                  spelled[c]));
    const std::string& path = r->text;
    auto normalised = workspace::relative_path(path, true);
    if (!normalised)
        return refuse(fmt::format("resolves to \"{}\", whose \"..\" leaves the workspace; name a directory "
                                  "inside the workspace",
                                  path));
    if (normalised->empty())
        return refuse("resolves to the workspace root itself, which qk would empty whole; name a directory inside "
                      "it, as \"{projectRoot}/.cache\"");
    const std::string& out = *normalised;
    for (const std::string& c : components(out))
        if (const char* name = reserved(c))
            return refuse(fmt::format("resolves to \"{}\", which is or lies in {} (\"{}\"), which qk never "
                                      "empties; name a directory outside .git, .qk and node_modules",
                                      out, name, c));
    return out;
}

// Where a link points, for the message that names it; "" when it cannot be read.
std::string link_target(int at, const char* name)
{
    char buf[4096];
    ssize_t n = ::readlinkat(at, name, buf, sizeof buf);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

Error file_error(const std::string& dir, const std::string& file)
{
    return error(fmt::format("scratch directory \"{}\": {} is a file, not a directory; remove it, or change the "
                             "scratch entry",
                             dir, file));
}

Error link_error(const std::string& dir, const std::string& link, const std::string& target)
{
    return error(fmt::format("scratch directory \"{}\": {} is a symbolic link{}, which emptying could follow out "
                             "of the workspace; remove the link, or change the scratch entry",
                             dir, link, target.empty() ? "" : fmt::format(" (to {})", target)));
}

// Opens the directory `name` in `at` without following a link, creating it when missing. `shown` is its
// workspace-relative path, `dir` the scratch directory being reached.
Result<UniqueFd> open_step(int at, const std::string& name, const std::string& shown, const std::string& dir)
{
    // Created, then opened: another process removing it in between sends us round again, a few times.
    for (int attempt = 0; attempt < 3; ++attempt) {
        UniqueFd fd(::openat(at, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (fd.valid())
            return fd;
        int err = errno;
        if (err == ENOENT) {
            if (::mkdirat(at, name.c_str(), 0777) != 0 && errno != EEXIST)
                return sys_error(fmt::format("cannot create {} for scratch directory \"{}\"", shown, dir));
            continue;
        }
        struct stat st {};
        if ((err == ELOOP || err == ENOTDIR) && ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            if (S_ISLNK(st.st_mode))
                return link_error(dir, shown, link_target(at, name.c_str()));
            if (!S_ISDIR(st.st_mode))
                return file_error(dir, shown);
        }
        return sys_error(fmt::format("cannot open {} to empty scratch directory \"{}\"", shown, dir), err);
    }
    return error(fmt::format("cannot create {} for scratch directory \"{}\": it vanished each time it was made; "
                             "is another process removing it?",
                             shown, dir));
}

// The names in the directory `fd`, read whole before anything is removed from it.
Result<std::vector<std::string>> list_names(int fd, const std::string& shown)
{
    int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
    DIR* d = copy < 0 ? nullptr : ::fdopendir(copy);
    if (!d) {
        int err = errno;
        if (copy >= 0)
            ::close(copy);
        return sys_error(fmt::format("cannot list {}", shown), err);
    }
    std::vector<std::string> names;
    errno = 0;
    while (const dirent* e = ::readdir(d)) {
        std::string_view n = e->d_name;
        if (n != "." && n != "..")
            names.emplace_back(n);
    }
    int err = errno;
    ::closedir(d);
    if (err != 0)
        return sys_error(fmt::format("cannot list {}", shown), err);
    return names;
}

Status remove_entry(int at, const std::string& name, const std::string& shown)
{
    if (::unlinkat(at, name.c_str(), 0) != 0 && errno != ENOENT)
        return sys_error(fmt::format("cannot remove {} from a scratch directory", shown));
    return {};
}

// Removes everything in the directory `fd` (on device `dev`), never following a link.
Status clear_dir(int fd, const std::string& shown, dev_t dev)
{
    QK_TRY(names, list_names(fd, shown));
    for (const std::string& name : *names) {
        std::string path = shown + "/" + name;
        struct stat st {};
        if (::fstatat(fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT)
                continue;
            return sys_error(fmt::format("cannot examine {} in a scratch directory", path));
        }
        if (!S_ISDIR(st.st_mode)) {
            QK_TRY_STATUS(remove_entry(fd, name, path));
            continue;
        }
        // Its entries can only be removed with write and search rights on it.
        // A link or file put in its place since the fstatat is removed instead (EOPNOTSUPP, ELOOP, ENOTDIR).
        if ((st.st_mode & 0700) != 0700 &&
            ::fchmodat(fd, name.c_str(), (st.st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != EOPNOTSUPP)
                return sys_error(fmt::format("cannot make {} writable to empty it; check who owns it", path));
            QK_TRY_STATUS(remove_entry(fd, name, path));
            continue;
        }
        UniqueFd sub(::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!sub.valid()) {
            if (errno == ELOOP || errno == ENOTDIR) {
                QK_TRY_STATUS(remove_entry(fd, name, path));
                continue;
            }
            if (errno == ENOENT)
                continue;
            return sys_error(fmt::format("cannot open {} in a scratch directory", path));
        }
        if (::fstat(sub.get(), &st) != 0)
            return sys_error(fmt::format("cannot examine {} in a scratch directory", path));
        // A mount inside would have us delete another file system's files (a bind mount of anything).
        if (st.st_dev != dev)
            return error(fmt::format("{} is a mount point inside a scratch directory; qk does not empty another "
                                     "file system: unmount it, or change the scratch entry",
                                     path));
        QK_TRY_STATUS(clear_dir(sub.get(), path, dev));
        sub.reset();
        if (::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
            return sys_error(fmt::format("cannot remove the directory {} from a scratch directory", path));
    }
    return {};
}

}  // namespace

Result<std::vector<std::string>> resolve_scratch(const workspace::Workspace&, const workspace::Project& project,
                                                 const workspace::Target& target)
{
    std::string task = project.name + ":" + target.name;
    std::vector<std::string> dirs;
    for (const std::string& written : target.sandbox.scratch) {
        QK_TRY(dir, resolve_entry(project, task, written));
        if (std::find(dirs.begin(), dirs.end(), *dir) == dirs.end())
            dirs.push_back(std::move(*dir));
    }
    return dirs;
}

Status check_scratch(const workspace::Workspace& ws, const std::vector<std::string>& dirs)
{
    for (const std::string& dir : dirs) {
        auto parts = components(dir);
        for (const std::string& c : parts)
            if (special_dir(c) == SpecialDir::qk)
                return error(fmt::format("scratch directory \"{}\" lies in qk's state (.qk), which qk never "
                                         "empties; change the scratch entry",
                                         dir));
        // With no .qk in its path and no project under it, it cannot hold qk's cache and state either: they
        // live in the workspace root's .qk, so a project root's .qk is covered by the project check.
        for (const workspace::Project& p : ws.projects())
            if (p.root != "." && is_within(p.root, dir))
                return error(fmt::format("scratch directory \"{}\" holds the project {} ({}), which emptying it "
                                         "would delete; name a directory inside the project instead",
                                         dir, p.name, p.root));
        std::filesystem::path at = ws.root();
        std::string shown;
        for (const std::string& c : parts) {
            at /= c;
            shown += shown.empty() ? c : "/" + c;
            struct stat st {};
            if (::lstat(at.c_str(), &st) != 0) {
                if (errno == ENOENT)
                    break;  // made when it is emptied
                return sys_error(fmt::format("cannot examine {} of scratch directory \"{}\"", shown, dir));
            }
            if (S_ISLNK(st.st_mode))
                return link_error(dir, shown, link_target(AT_FDCWD, at.c_str()));
            if (!S_ISDIR(st.st_mode))
                return file_error(dir, shown);
        }
    }
    return {};
}

Status check_scratch_overlaps(const std::vector<TaskScratch>& tasks)
{
    // Sorted with a '/' after each, a directory comes right before everything inside it: a run of
    // thousands of tasks is checked in n log n, not pair by pair.
    std::vector<std::pair<std::string, std::size_t>> dirs;  // "dir/", task index
    for (std::size_t t = 0; t < tasks.size(); ++t)
        for (const std::string& d : tasks[t].second)
            dirs.emplace_back(d + "/", t);
    std::sort(dirs.begin(), dirs.end());
    auto dir = [](const std::string& key) { return std::string_view(key).substr(0, key.size() - 1); };
    for (std::size_t i = 0; i < dirs.size(); ++i)
        for (std::size_t j = i + 1; j < dirs.size() && is_within(dir(dirs[j].first), dir(dirs[i].first)); ++j) {
            auto [x, y] = std::minmax(dirs[i], dirs[j], [](const auto& p, const auto& q) { return p.second < q.second; });
            if (tasks[x.second].first == tasks[y.second].first)
                continue;
            std::string a(dir(x.first)), b(dir(y.first));
            std::string how = a == b ? "share the scratch directory" : "have nested scratch directories";
            return error(fmt::format("{} and {} {} (\"{}\" and \"{}\"): each empties it before it runs, "
                                     "so neither could rely on it; give each task a directory of its own",
                                     tasks[x.second].first, tasks[y.second].first, how, a, b));
        }
    return {};
}

Status empty_scratch(const std::filesystem::path& root, const std::string& dir)
{
    if (!is_plain_relative(dir))
        return error(fmt::format("scratch directory \"{}\" is not a normalised path inside the workspace; resolve "
                                 "it with resolve_scratch first",
                                 dir));
    auto parts = components(dir);
    UniqueFd at(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!at.valid())
        return sys_error(fmt::format("cannot open the workspace root {}", root.string()));
    std::string shown;
    for (const std::string& c : parts) {
        shown += shown.empty() ? c : "/" + c;
        QK_TRY(next, open_step(at.get(), c, shown, dir));
        at = std::move(*next);
    }
    struct stat st {};
    if (::fstat(at.get(), &st) != 0)
        return sys_error(fmt::format("cannot examine scratch directory {}", dir));
    // Kept, but it must be writable and searchable to lose its entries (a tool may have made it read-only).
    if ((st.st_mode & 0700) != 0700 && ::fchmod(at.get(), (st.st_mode & 07777) | 0700) != 0)
        return sys_error(fmt::format("cannot make scratch directory {} writable to empty it; check who owns it", dir));
    return clear_dir(at.get(), dir, st.st_dev);
}

}  // namespace qk::run
