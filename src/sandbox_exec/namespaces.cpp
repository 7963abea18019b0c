#include "namespaces.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "qk/enforce/read_mask.hpp"
#include "qk/util/io.hpp"

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
    std::string lowers = l.mask.empty() ? esc(l.lower) : esc(l.mask) + ":" + esc(l.lower);
    std::string options = fmt::format("lowerdir={},upperdir={},workdir={},userxattr,redirect_dir=nofollow,index=off,"
                                      "metacopy=off",
                                      lowers, esc(l.upper), esc(l.work));
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
    if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, "lowerdir+", l.lower.c_str(), 0) != 0)
        return errno == EINVAL ? mount_legacy(l) : setup_error("overlay", "overlay lowerdir" + context_log(fs.get()));
    const std::pair<const char*, const char*> strings[] = {
        {"upperdir", l.upper.c_str()}, {"workdir", l.work.c_str()},
        {"redirect_dir", "nofollow"},  {"index", "off"},
        {"metacopy", "off"},
    };
    for (const auto& [key, value] : strings)
        if (::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, value, 0) != 0)
            return setup_error("overlay", fmt::format("overlay option {}={}{}", key, value, context_log(fs.get())));
    if (::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0)
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

Step enter_namespaces(bool pid_namespace)
{
    const uid_t uid = ::geteuid();
    const gid_t gid = ::getegid();
    // Root mounts in a mount namespace of its own without a user namespace: mapping every id (so files
    // of any owner copy up) takes a writer outside the namespace, and mapping root alone would make
    // copying up another owner's file fail with EOVERFLOW.
    const bool user_namespace = uid != 0;
    int flags = CLONE_NEWNS | (user_namespace ? CLONE_NEWUSER : 0) | (pid_namespace ? CLONE_NEWPID : 0);
    if (::unshare(flags) != 0) {
        SetupError e = setup_error("unshare", user_namespace ? "cannot make a user namespace" : "cannot make a mount namespace");
        e.message += userns_hint();
        return e;
    }
    if (user_namespace) {
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

Step build_mask_on_tmpfs(const std::string& dir, const std::string& root, std::vector<std::string> visible,
                         const std::vector<std::string>& hidden)
{
    // A tmpfs rather than the sandbox directory's disk: freeing a few dozen directories on ext4 mounted
    // with discard costs milliseconds each, a tmpfs costs nothing and takes user.* xattrs (Linux 6.6).
    if (::mount("qk-mask", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700,size=16m") != 0)
        return setup_error("read-mask", "cannot mount a tmpfs on " + dir + " for the read mask");
    auto built = enforce::build_read_mask(root, dir, std::move(visible), hidden);
    if (!built)
        return SetupError{"read-mask", built.error().sys_errno, built.error().message};
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
    if (!s.mask.empty()) {
        std::vector<std::string> visible = s.visible;
        visible.insert(visible.end(), s.binds.begin(), s.binds.end());
        if (auto e = build_mask_on_tmpfs(s.mask, s.root, std::move(visible), s.hidden))
            return e;
    }
    if (auto e = mount_overlay_layers({s.root, s.upper, s.work, s.root, s.mask}))
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
    return std::nullopt;
}

}  // namespace qk::sandbox_exec
