#include "namespaces.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "qk/enforce/read_mask.hpp"
#include "qk/enforce/sandbox_plan.hpp"
#include "qk/util/io.hpp"
#include "qk/util/path_within.hpp"

namespace qk::sandbox_exec {

namespace {

Step write_proc(const char* path, const std::string& text, const char* stage)
{
    UniqueFd fd(::open(path, O_WRONLY | O_CLOEXEC));
    if (!fd.valid() || !write_all(fd.get(), text)) {
        SetupError e = setup_error(stage, fmt::format("cannot write {}", path));
        e.message += userns_hint();
        return e;
    }
    return std::nullopt;
}

// The mount API's error log (what overlayfs said about its options), when it kept one.
std::string context_log(int fs_fd)
{
    std::string out;
    char buf[512];
    for (int i = 0; i < 8; ++i) {
        ssize_t n = ::read(fs_fd, buf, sizeof buf);
        if (n <= 0)
            break;
        out += (out.empty() ? " (" : "; ") + std::string(buf, static_cast<std::size_t>(n));
    }
    return out.empty() ? out : out + ")";
}

// The old mount(2) form, for kernels before 6.8's "lowerdir+": ':' ',' and '\' escaped in paths.
Step mount_legacy(const OverlayLayers& l)
{
    auto esc = [](const std::string& p) {
        std::string out;
        for (char c : p) {
            if (c == ':' || c == ',' || c == '\\')
                out += '\\';
            out += c;
        }
        return out;
    };
    std::string lowers = l.mask.empty() ? std::string() : esc(l.mask) + ":";
    if (!l.mirror.empty())
        lowers += esc(l.mirror) + ":";
    lowers += esc(l.lower);
    std::string options = fmt::format("lowerdir={},upperdir={},workdir={},{}redirect_dir={},index=off,metacopy=off",
                                      lowers, esc(l.upper), esc(l.work), l.host_root ? "" : "userxattr,",
                                      l.mirror.empty() ? "nofollow" : "follow");
    if (::mount("overlay", l.target.c_str(), "overlay", 0, options.c_str()) != 0)
        return setup_error("overlay", fmt::format("cannot mount an overlay of {} on {}", l.lower, l.target));
    return std::nullopt;
}

}  // namespace

Step mount_overlay_layers(const OverlayLayers& l)
{
    UniqueFd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
    if (!fs.valid())
        return errno == ENOSYS ? mount_legacy(l) : setup_error("overlay", "cannot open an overlay filesystem context");
    // Lower layers are given top first: the mask hides what lies beneath it in the workspace.
    if (!l.mask.empty() && ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "lowerdir+", l.mask.c_str(), 0) != 0)
        return errno == EINVAL ? mount_legacy(l) : setup_error("overlay", "overlay lowerdir (mask)" + context_log(fs.get()));
    // The run's mirror above the workspace: its opaque top directory is all a redirect finds.
    if (!l.mirror.empty() && ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "lowerdir+", l.mirror.c_str(), 0) != 0)
        return setup_error("overlay", "overlay lowerdir (the run's mirror)" + context_log(fs.get()));
    if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "lowerdir+", l.lower.c_str(), 0) != 0)
        return errno == EINVAL ? mount_legacy(l) : setup_error("overlay", "overlay lowerdir" + context_log(fs.get()));
    // Redirects are followed only into the run's mirror, whose layers are root's: a task cannot write a
    // trusted.* xattr, and its own user.overlay.* ones are plain xattrs there.
    const std::pair<const char*, const char*> strings[] = {
        {"upperdir", l.upper.c_str()},
        {"workdir", l.work.c_str()},
        {"redirect_dir", l.mirror.empty() ? "nofollow" : "follow"},
        {"index", "off"},
        {"metacopy", "off"},
    };
    for (const auto& [key, value] : strings)
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, value, 0) != 0)
            return setup_error("overlay", fmt::format("overlay option {}={}{}", key, value, context_log(fs.get())));
    if (!l.host_root && ::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0)
        return setup_error("overlay", "overlay option userxattr" + context_log(fs.get()));
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) {
        SetupError e = setup_error("overlay", fmt::format("cannot create an overlay of {}{}", l.lower, context_log(fs.get())));
        if (e.error == EINVAL)
            e.message += "; the upper directory's filesystem may not take user.* extended attributes, or a mount "
                         "below " + l.lower + " is locked in this namespace";
        return e;
    }
    UniqueFd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, 0));
    if (!mnt.valid())
        return setup_error("overlay", "cannot make the overlay a mount");
    if (::move_mount(mnt.get(), "", AT_FDCWD, l.target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return setup_error("overlay", fmt::format("cannot mount the overlay on {}", l.target));
    return std::nullopt;
}

UniqueFd open_beneath(int root_fd, const std::string& rel)
{
    struct open_how how {};
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return UniqueFd(static_cast<int>(::syscall(SYS_openat2, root_fd, rel.empty() ? "." : rel.c_str(), &how, sizeof how)));
}

namespace {

// Root's user namespace maps every id to itself but kStandInOwner (ids 0 to 4294967293), so files of any owner
// copy up and stay theirs, while the read mask's stand-ins stay out of every capability's reach. Writing a
// map wider than the writer's own id takes CAP_SETUID over the parent namespace, which the process inside
// no longer has: a child forked before unshare, still outside, writes both maps once told.
Step map_every_id_by_a_child(int flags)
{
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return setup_error("uid_map", "cannot make a pipe");
    UniqueFd go_read(pipe_fds[0]), go_write(pipe_fds[1]);
    const pid_t parent = ::getpid();
    pid_t mapper = ::fork();
    if (mapper < 0)
        return setup_error("uid_map", "cannot start the process that maps ids");
    if (mapper == 0) {
        go_write.reset();
        char c;
        if (::read(go_read.get(), &c, 1) != 1)
            ::_exit(1);  // the parent could not unshare: nothing to map
        for (const char* map : {"uid_map", "gid_map"}) {
            UniqueFd fd(::open(fmt::format("/proc/{}/{}", parent, map).c_str(), O_WRONLY | O_CLOEXEC));
            if (!fd.valid() || !write_all(fd.get(), fmt::format("0 0 {}\n", enforce::kStandInOwner)))
                ::_exit(2);
        }
        ::_exit(0);
    }
    go_read.reset();
    const int unshared = ::unshare(flags);
    const int unshare_errno = errno;
    if (unshared == 0)
        (void)write_all(go_write.get(), "g");
    go_write.reset();
    int status = 0;
    while (::waitpid(mapper, &status, 0) < 0 && errno == EINTR) {
    }
    if (unshared != 0) {
        errno = unshare_errno;
        SetupError e = setup_error("unshare", "cannot make a user namespace");
        e.message += userns_hint();
        return e;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        errno = EPERM;
        SetupError e = setup_error("uid_map", "cannot map the ids of the user namespace");
        e.message += userns_hint();
        return e;
    }
    return std::nullopt;
}

}  // namespace

Step fork_mapped_as_root(int namespaces, pid_t& pid)
{
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return setup_error("uid_map", "cannot make a pipe");
    UniqueFd go_read(pipe_fds[0]), go_write(pipe_fds[1]);
    pid = static_cast<pid_t>(::syscall(SYS_clone, CLONE_NEWUSER | namespaces | SIGCHLD, nullptr, nullptr, nullptr, 0));
    if (pid < 0) {
        SetupError e = setup_error("unshare", "cannot make a user namespace");
        e.message += userns_hint();
        return e;
    }
    if (pid == 0) {
        go_write.reset();
        char c = 0;
        while (::read(go_read.get(), &c, 1) < 0 && errno == EINTR) {
        }
        if (c != 'g')
            ::_exit(enforce::kSetupFailedStatus);  // not mapped: the parent says why
        return std::nullopt;
    }
    go_read.reset();
    for (const char* map : {"uid_map", "gid_map"}) {
        UniqueFd fd(::open(fmt::format("/proc/{}/{}", pid, map).c_str(), O_WRONLY | O_CLOEXEC));
        if (!fd.valid() || !write_all(fd.get(), fmt::format("0 0 {}\n", enforce::kStandInOwner))) {
            SetupError e = setup_error("uid_map", "cannot map the ids of the user namespace");
            e.message += userns_hint();
            go_write.reset();  // the child reads nothing and exits
            while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
            }
            return e;
        }
    }
    if (!write_all(go_write.get(), "g")) {
        SetupError e = setup_error("uid_map", "cannot tell the mapped child to go on");
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        return e;
    }
    return std::nullopt;
}

Step enter_mount_namespace()
{
    if (::unshare(CLONE_NEWNS) != 0)
        return setup_error("unshare", "cannot make a mount namespace");
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return setup_error("mount-private", "cannot make the mount tree private");
    return std::nullopt;
}

Step enter_user_namespace_as_root()
{
    return map_every_id_by_a_child(CLONE_NEWUSER);
}

Step enter_namespaces(bool pid_namespace, bool net_namespace)
{
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    // A user namespace even for root: the command's capabilities then count only inside it, over its
    // own mounts, and none over the host (a sysctl, a module, another process, the raw disk).
    int flags = CLONE_NEWNS | CLONE_NEWUSER | (pid_namespace ? CLONE_NEWPID : 0) | (net_namespace ? CLONE_NEWNET : 0);
    if (uid == 0) {
        if (auto e = map_every_id_by_a_child(flags))
            return e;
    } else {
        if (::unshare(flags) != 0) {
            SetupError e = setup_error("unshare", "cannot make a user namespace");
            e.message += userns_hint();
            return e;
        }
        if (auto e = write_proc("/proc/self/setgroups", "deny", "uid_map"))
            return e;
        if (auto e = write_proc("/proc/self/uid_map", fmt::format("{} {} 1\n", uid, uid), "uid_map"))
            return e;
        if (auto e = write_proc("/proc/self/gid_map", fmt::format("{} {} 1\n", gid, gid), "uid_map"))
            return e;
    }
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        SetupError e = setup_error("mount-private", "cannot make the mount tree private");
        e.message += userns_hint();
        return e;
    }
    return std::nullopt;
}

Step build_mask_on_tmpfs(const std::string& dir, const std::string& root, const std::vector<std::string>& visible,
                         const std::vector<std::string>& hidden, std::optional<enforce::StandInOwner> owner,
                         const std::string& mirror)
{
    // A tmpfs rather than the sandbox directory's disk: freeing the mask's entries on ext4 mounted with
    // discard costs milliseconds a directory, a tmpfs costs nothing and takes user.* xattrs (Linux 6.6).
    // Stand-ins are sparse: they take inodes, not pages.
    if (::mount("qk-mask", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700,size=64m") != 0)
        return setup_error("read-mask", "cannot mount a tmpfs on " + dir + " for the read mask");
    auto built = enforce::build_read_mask(root, dir, visible, hidden, owner, mirror);
    if (!built)
        return SetupError{"read-mask", built.error().sys_errno, built.error().message};
    return std::nullopt;
}

namespace {

// A read-only bind of `rel` over itself on the merged tree: what qk keeps there (its cache) cannot be
// written, whatever the command's rights, and it cannot be unmounted under Landlock.
Step bind_read_only(int merged_fd, const std::string& root, const std::string& rel)
{
    UniqueFd at = open_beneath(merged_fd, rel);
    if (!at.valid())
        return std::nullopt;  // not there (or behind a link): nothing to protect
    UniqueFd tree(::open_tree(at.get(), "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH | OPEN_TREE_CLOEXEC));
    struct mount_attr attr {};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (!tree.valid() || ::mount_setattr(tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0 ||
        ::move_mount(tree.get(), "", at.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        return setup_error("read-only", fmt::format("cannot make {}/{} read-only", root, rel));
    return std::nullopt;
}

// An empty read-only tmpfs over `dir`, which holds sandboxes' upper, work and mask directories: the
// overlays keep what they mounted, the command sees none of it. The command's own temporary directory,
// when it lies there, is bound back in at the same path.
Step cover(const std::string& dir, const std::string& tmpdir)
{
    UniqueFd tmp_tree;
    if (is_under(tmpdir, dir)) {
        tmp_tree = UniqueFd(::open_tree(AT_FDCWD, tmpdir.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
        if (!tmp_tree.valid())
            return setup_error("cover", "cannot clone the temporary directory " + tmpdir);
    }
    if (::mount("qk-cover", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0755,size=64k") != 0)
        return setup_error("cover", "cannot hide " + dir + " from the command");
    if (tmp_tree.valid()) {
        std::string made = dir;
        for (std::size_t pos = dir.size() + 1; pos <= tmpdir.size();) {
            std::size_t slash = tmpdir.find('/', pos);
            made = tmpdir.substr(0, slash);
            if (::mkdir(made.c_str(), 0700) != 0 && errno != EEXIST)
                return setup_error("cover", "cannot make " + made + " on the cover");
            pos = slash == std::string::npos ? tmpdir.size() + 1 : slash + 1;
        }
        if (::move_mount(tmp_tree.get(), "", AT_FDCWD, tmpdir.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            return setup_error("cover", "cannot bind the temporary directory " + tmpdir + " back");
    }
    if (::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                nullptr) != 0)
        return setup_error("cover", "cannot make the cover of " + dir + " read-only");
    return std::nullopt;
}

}  // namespace

Step protect_machinery(const OverlaySpec& s)
{
    UniqueFd merged(::open(s.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!merged.valid())
        return setup_error("overlay", fmt::format("cannot open the merged workspace {}", s.root));
    for (const std::string& rel : s.read_only)
        if (auto e = bind_read_only(merged.get(), s.root, rel))
            return e;
    for (const std::string& dir : s.cover) {
        struct stat st {};
        if (dir == s.root || is_under(s.root, dir) || ::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            continue;  // gone, or the workspace itself lies there (QK_SANDBOX_DIR set so): nothing to cover
        if (auto e = cover(dir, s.tmpdir))
            return e;
    }
    return std::nullopt;
}

Step mount_overlay(const OverlaySpec& s)
{
    UniqueFd real_root(::open(s.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!real_root.valid())
        return setup_error("overlay", fmt::format("cannot open the workspace {}", s.root));
    // Cloned before the overlay hides them; a bind that is gone (or now behind a link) is left out.
    std::vector<std::pair<std::string, UniqueFd>> trees;
    for (const std::string& rel : s.binds) {
        UniqueFd at = open_beneath(real_root.get(), rel);
        if (!at.valid())
            continue;
        UniqueFd tree(::open_tree(at.get(), "", OPEN_TREE_CLONE | AT_RECURSIVE | AT_EMPTY_PATH | OPEN_TREE_CLOEXEC));
        if (!tree.valid())
            return setup_error("bind", fmt::format("cannot clone {}/{} to bind it through", s.root, rel));
        trees.emplace_back(rel, std::move(tree));
    }
    if (!s.mask.empty() && !s.mask_built)
        if (auto e = build_mask_on_tmpfs(s.mask, s.root, s.mask_visible(), s.hidden, std::nullopt))
            return e;
    if (auto e = mount_overlay_layers({s.root, s.upper, s.work, s.root, s.mask, s.mirror, s.host_root}))
        return e;
    UniqueFd merged(::open(s.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!merged.valid())
        return setup_error("overlay", fmt::format("cannot open the merged workspace {}", s.root));
    for (auto& [rel, tree] : trees) {
        UniqueFd target = open_beneath(merged.get(), rel);
        if (!target.valid())
            continue;  // not in the merged tree: nothing to bind onto
        if (::move_mount(tree.get(), "", target.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
            return setup_error("bind", fmt::format("cannot bind {}/{} through the overlay", s.root, rel));
    }
    for (const std::string& rel : s.make_dirs) {
        std::size_t slash = rel.rfind('/');
        std::string parent = slash == std::string::npos ? std::string() : rel.substr(0, slash);
        std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
        UniqueFd at = open_beneath(merged.get(), parent);
        if (!at.valid())
            continue;  // a link or a file on the way: the rules leave it out as well
        UniqueFd dir(::openat(at.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (dir.valid() && ::mkdirat(dir.get(), name.c_str(), 0777) != 0 && errno != EEXIST)
            return setup_error("mkdir", fmt::format("cannot make the output directory {}", rel));
    }
    return protect_machinery(s);
}

}  // namespace qk::sandbox_exec
