// The syscall decoders of the strace parser: one complete call line into FsOp / ProcFork / ProcExec.
// They report what the call did as strace showed it; RecordingSink decides what that means.
#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <limits.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <fmt/core.h>

#include "qk/util/unique_fd.hpp"
#include "strace_names.hpp"
#include "strace_parser.hpp"

namespace qk::record {
namespace {

using strace::Call;
using strace::Return;

constexpr int kCwd = -1;   // the path argument is relative to the cwd
constexpr int kNone = -2;  // no such argument

// Where a call's arguments are: dirfd and path of the first and second path, and its flags.
struct Shape {
    std::string_view name;
    FsOpKind kind;
    int a_dir, a_path, b_dir, b_path, flags;
    strace::NameLookup lookup;
};

constexpr Shape kPathOps[] = {
    {"rename", FsOpKind::rename, kCwd, 0, kCwd, 1, kNone, nullptr},
    {"renameat", FsOpKind::rename, 0, 1, 2, 3, kNone, nullptr},
    {"renameat2", FsOpKind::rename, 0, 1, 2, 3, 4, strace::rename_flag},
    {"unlink", FsOpKind::unlink, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"unlinkat", FsOpKind::unlink, 0, 1, kNone, kNone, 2, strace::at_flag},
    {"rmdir", FsOpKind::rmdir, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"mkdir", FsOpKind::mkdir, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"mkdirat", FsOpKind::mkdir, 0, 1, kNone, kNone, kNone, nullptr},
    {"link", FsOpKind::link, kCwd, 0, kCwd, 1, kNone, nullptr},
    {"linkat", FsOpKind::link, 0, 1, 2, 3, 4, strace::at_flag},
    // The link's own path is what the call makes; the target is only text stored in it (op.b.name).
    {"symlink", FsOpKind::symlink, kCwd, 1, kNone, kNone, kNone, nullptr},
    {"symlinkat", FsOpKind::symlink, 1, 2, kNone, kNone, kNone, nullptr},
    {"truncate", FsOpKind::truncate, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"mknod", FsOpKind::mknod, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"mknodat", FsOpKind::mknod, 0, 1, kNone, kNone, kNone, nullptr},
};

// Lookups that only look, traced when a command asks for them (Command::record_lookups): a failure is
// a probe. stat and lstat are glibc's names for newfstatat on x86-64 but strace shows the raw call.
constexpr Shape kLookups[] = {
    {"stat", FsOpKind::look, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"lstat", FsOpKind::look, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"access", FsOpKind::look, kCwd, 0, kNone, kNone, kNone, nullptr},
    {"newfstatat", FsOpKind::look, 0, 1, kNone, kNone, kNone, nullptr},
    {"statx", FsOpKind::look, 0, 1, kNone, kNone, kNone, nullptr},
    {"faccessat", FsOpKind::look, 0, 1, kNone, kNone, kNone, nullptr},
    {"faccessat2", FsOpKind::look, 0, 1, kNone, kNone, kNone, nullptr},
};

// The calls after which paths may name aliases (FsOpKind::remap), when they succeed: see decode_remap.
constexpr std::string_view kRemaps[] = {"mount", "pivot_root", "move_mount", "fsmount", "setns", "open_tree"};

constexpr std::string_view kOthers[] = {"open",   "openat", "openat2", "creat",    "ftruncate", "chdir",
                                        "fchdir", "execve", "execveat", "fork",    "vfork",     "clone",
                                        "clone3", "io_uring_setup", "open_by_handle_at", "chroot"};

const Shape* path_op(std::string_view name)
{
    for (const auto& shape : kPathOps)
        if (shape.name == name)
            return &shape;
    for (const auto& shape : kLookups)
        if (shape.name == name)
            return &shape;
    return nullptr;
}

const std::string_view* remap(std::string_view name)
{
    for (const auto& call : kRemaps)
        if (call == name)
            return &call;
    return nullptr;
}

bool decodes(std::string_view name)
{
    for (auto other : kOthers)
        if (other == name)
            return true;
    if (StraceParser::decodes_network(name))
        return true;
    if (remap(name))
        return true;
    return path_op(name) != nullptr;
}

// Whether an opened file is a directory, when the open's flags do not say. strace cannot tell, so
// this looks at the file now: it may have been replaced between the call and this stat.
bool is_directory_now(const std::string& path)
{
    struct stat st {};
    return !path.empty() && ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The file an open_by_handle_at opened, which strace 6 does not name: the handle it shows is opened
// again here (an O_PATH fd, so nothing is read), on the filesystem of the fd it was given. The handle
// names the inode, so a rename since then shows the new name. Needs CAP_DAC_READ_SEARCH, as the call did.
std::optional<std::string> handle_path(std::string_view mount_arg, std::string_view handle_arg)
{
    auto mount = strace::parse_fd(mount_arg);
    auto type = strace::struct_field(handle_arg, "handle_type");
    auto bytes = strace::struct_field(handle_arg, "f_handle");
    if (!mount || !mount->path || !mount->path->starts_with('/') || !type || !bytes)
        return std::nullopt;
    auto quoted = strace::parse_quoted(*bytes);
    if (!quoted || quoted->truncated || quoted->bytes.empty() || quoted->bytes.size() > MAX_HANDLE_SZ)
        return std::nullopt;
    std::vector<unsigned char> storage(sizeof(file_handle) + quoted->bytes.size());
    auto* handle = reinterpret_cast<file_handle*>(storage.data());
    handle->handle_bytes = static_cast<unsigned>(quoted->bytes.size());
    // A type that is not a number (a name from a later strace) is no handle to open, not type 0.
    if (std::from_chars(type->data(), type->data() + type->size(), handle->handle_type).ec != std::errc())
        return std::nullopt;
    std::memcpy(handle->f_handle, quoted->bytes.data(), quoted->bytes.size());
    // Any directory on that filesystem will do: the fd's own, or the one it is in (opening a FIFO or a
    // device here could block or act). Not O_PATH, which open_by_handle_at refuses.
    std::string dir_path = *mount->path;
    if (!is_directory_now(dir_path))
        dir_path = dir_path.substr(0, std::max<std::size_t>(1, dir_path.rfind('/')));
    UniqueFd dir(::open(dir_path.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC));
    UniqueFd file(dir.valid() ? ::open_by_handle_at(dir.get(), handle, O_PATH | O_CLOEXEC) : -1);
    if (!file.valid())
        return std::nullopt;
    char buf[PATH_MAX];
    ssize_t n = ::readlink(fmt::format("/proc/self/fd/{}", file.get()).c_str(), buf, sizeof(buf));
    if (n <= 0 || buf[0] != '/' || static_cast<std::size_t>(n) >= sizeof(buf))
        return std::nullopt;
    return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace

std::string_view StraceParser::traced_syscalls(bool lookups)
{
    static const std::string list = [] {
        std::string out;
        for (const auto& shape : kPathOps)
            out += std::string(shape.name) + ",";
        for (auto other : kOthers)
            out += std::string(other) + ",";
        for (auto call : kRemaps)
            out += std::string(call) + ",";
        out += "socket,connect,sendto,sendmsg,sendmmsg,recvfrom,recvmsg,";
        out.pop_back();
        return out;
    }();
    static const std::string with_lookups = [] {
        std::string out = list;
        for (const auto& shape : kLookups)
            out += "," + std::string(shape.name);
        return out;
    }();
    return lookups ? with_lookups : list;
}

Status StraceParser::on_call(pid_t tid, std::string_view text)
{
    if (!decodes(strace::call_name(text)))
        return {};
    QK_TRY(call, strace::parse_call(text));
    QK_TRY(ret, strace::parse_return(call->result));
    return decode(tid, *call, *ret);
}

std::optional<std::string> StraceParser::cwd_of(const Task& t) const
{
    if (!t.cwd || t.cwd->empty())
        return std::nullopt;
    return *t.cwd;
}

Result<std::optional<std::string>> StraceParser::dirfd_base(Task& t, std::string_view arg)
{
    QK_TRY(fd, strace::parse_fd(arg));
    bool absolute = fd->path && fd->path->starts_with('/');
    if (fd->fd == strace::kAtFdcwd) {
        if (absolute)
            *t.cwd = *fd->path;  // the kernel's own cwd at this call: it corrects ours
        return cwd_of(t);
    }
    if (absolute)
        return std::optional<std::string>(*fd->path);
    return std::optional<std::string>();
}

Result<std::optional<PathArg>> StraceParser::path_arg(const std::optional<std::string>& base, std::string_view arg,
                                                      long result)
{
    auto quoted = strace::parse_quoted(arg);
    if (!quoted) {
        if (arg.starts_with("0x") || arg == "NULL") {
            // strace shows an address when it could not read the name: the kernel could not either
            // (EFAULT), or the memory changed in between.
            if (result != -EFAULT)
                sink_.mark_incomplete("strace could not read a path a system call was given");
            return std::optional<PathArg>();
        }
        return quoted.error();
    }
    PathArg p;
    p.name = std::move(quoted->bytes);
    p.truncated = quoted->truncated;
    p.base = base.value_or("");
    bool relative = p.name.empty() || p.name.front() != '/';
    if (relative && p.base.empty()) {
        sink_.mark_incomplete("strace did not show the directory a relative path was resolved in");
        return std::optional<PathArg>();
    }
    if ((relative ? p.base.size() + 1 : 0) + p.name.size() >= kPathMax)
        p.truncated = true;
    return std::optional<PathArg>(std::move(p));
}

Status StraceParser::decode(pid_t tid, const Call& call, const Return& ret)
{
    if (!ret.known)
        return {};  // it never returned to the caller (killed, or replaced by an exec)
    auto it = tasks_.find(tid);
    if (it == tasks_.end())
        return error(fmt::format("no process is known for pid {}", tid));
    Task& t = it->second;
    std::string_view name = call.name;
    if (name == "open" || name == "openat" || name == "openat2" || name == "creat")
        return decode_open(t, call, ret);
    if (is_fork_call(name))
        return decode_fork(t, call, ret);
    if (name == "execve" || name == "execveat")
        return decode_exec(t, call, ret);
    if (name == "chdir" || name == "fchdir")
        return decode_chdir(t, call, ret);
    if (name == "open_by_handle_at")
        return decode_open_handle(t, call, ret);
    if (decodes_network(name))
        return decode_network(t, call, ret);
    if (remap(name))
        return decode_remap(t, call, ret);
    if (name == "chroot") {
        // Later names are relative to the new root, which strace does not apply (eBPF does).
        if (ret.value == 0 && !(call.args.size() == 1 && call.args[0] == "\"/\""))
            sink_.mark_incomplete(fmt::format("process {} changed its root directory (chroot): strace shows the "
                                              "names it passes, relative to that root",
                                              t.tgid));
        return {};
    }
    if (name == "io_uring_setup") {
        if (ret.value >= 0)
            sink_.mark_incomplete("io_uring in use: its file operations are invisible to strace");
        else if (ret.value == -ENOSYS)
            sink_.recording().add_refused_call("io_uring_setup");  // enforce's seccomp filter
        return {};
    }
    return decode_path_op(t, call, ret);
}

Status StraceParser::decode_open(Task& t, const Call& call, const Return& ret)
{
    std::optional<std::string> base = cwd_of(t);
    std::size_t path = 0;
    std::uint64_t flags = O_CREAT | O_WRONLY | O_TRUNC;  // creat()
    if (call.name == "open" || call.name == "creat") {
        QK_TRY_STATUS(strace::need_args(call, call.name == "open" ? 2 : 1));
        if (call.name == "open") {
            QK_TRY(f, strace::parse_flags(call.args[1], strace::open_flag));
            flags = *f;
        }
    } else {
        QK_TRY_STATUS(strace::need_args(call, 3));
        QK_TRY(dir, dirfd_base(t, call.args[0]));
        base = *dir;
        path = 1;
        std::string_view flags_text = call.args[2];
        if (call.name == "openat2") {
            auto field = strace::struct_field(call.args[2], "flags");
            if (!field)
                return error("openat2 without flags in its open_how");
            flags_text = *field;
        }
        QK_TRY(f, strace::parse_flags(flags_text, strace::open_flag));
        flags = *f;
    }
    QK_TRY(a, path_arg(base, call.args[path], ret.value));
    if (!*a)
        return {};
    FsOp op;
    op.kind = FsOpKind::open;
    op.pid = t.tgid;
    op.result = ret.value;
    op.flags = static_cast<std::uint32_t>(flags);
    op.a = std::move(**a);
    bool opened = ret.value >= 0;
    if (opened && ret.path && ret.path->starts_with('/')) {
        op.resolved = *ret.path;
        op.resolved_truncated = op.resolved.size() >= kPathMax;
    }
    // Only O_EXCL proves the open made the file; strace cannot see FMODE_CREATED.
    op.created = op.created_known = opened && (flags & O_CREAT) && (flags & O_EXCL);
    op.directory = (flags & O_DIRECTORY) != 0;
    if (opened && !op.directory && (flags & O_ACCMODE) == O_RDONLY && !op.a.truncated)
        op.directory = is_directory_now(op.resolved.empty() ? PathResolver::join_lexically(op.a.base, op.a.name)
                                                            : op.resolved);
    sink_.on_fs(op);
    return {};
}

Status StraceParser::decode_open_handle(Task& t, const Call& call, const Return& ret)
{
    if (ret.value < 0)
        return {};  // no name was passed: a failure names nothing
    QK_TRY_STATUS(strace::need_args(call, 3));
    std::optional<std::string> path;
    if (ret.path && ret.path->starts_with('/'))
        path = *ret.path;
    else
        path = handle_path(call.args[0], call.args[1]);
    if (!path) {
        sink_.mark_incomplete("strace did not name the file that open_by_handle_at opened, and its handle "
                              "could not be opened again to find out");
        return {};
    }
    QK_TRY(flags, strace::parse_flags(call.args[2], strace::open_flag));
    FsOp op;
    op.kind = FsOpKind::open;
    op.pid = t.tgid;
    op.result = ret.value;
    op.flags = static_cast<std::uint32_t>(*flags);
    op.resolved = *path;
    op.resolved_truncated = op.resolved.size() >= kPathMax;
    op.directory = (*flags & O_DIRECTORY) || ((*flags & O_ACCMODE) == O_RDONLY && is_directory_now(op.resolved));
    sink_.on_fs(op);
    return {};
}

Status StraceParser::decode_remap(Task& t, const Call& call, const Return& ret)
{
    if (ret.value < 0)
        return {};
    if (call.name == "mount") {
        QK_TRY_STATUS(strace::need_args(call, 4));
        QK_TRY(flags, strace::parse_flags(call.args[3], strace::mount_flag));
        // As the kernel reads them: a remount, or a mere propagation change, moves no path.
        constexpr std::uint64_t propagation = MS_UNBINDABLE | MS_PRIVATE | MS_SLAVE | MS_SHARED;
        if ((*flags & MS_REMOUNT) || (!(*flags & MS_BIND) && (*flags & propagation)))
            return {};
    }
    if (call.name == "setns" || call.name == "open_tree") {
        bool setns = call.name == "setns";
        QK_TRY_STATUS(strace::need_args(call, setns ? 2 : 3));
        QK_TRY(flags, strace::parse_flags(call.args[setns ? 1 : 2], setns ? strace::clone_flag : strace::open_tree_flag));
        // setns into another namespace's mount tree (with type 0, the fd tells: strace shows "mnt:[...]",
        // or a /proc/N/ns/ path); open_tree's clone.
        if (setns && *flags == 0) {
            auto fd = strace::parse_fd(call.args[0]);
            if (fd && fd->path && !fd->path->starts_with("mnt:") && !fd->path->ends_with("/ns/mnt") &&
                !fd->path->starts_with("pidfd:") && !fd->path->starts_with("anon_inode:[pidfd]"))
                return {};
        } else if (setns ? !(*flags & CLONE_NEWNS) : !(*flags & 1)) {
            return {};
        }
    }
    FsOp op;
    op.kind = FsOpKind::remap;
    op.pid = t.tgid;
    op.call = remap(call.name)->data();
    sink_.on_fs(op);
    return {};
}

Status StraceParser::decode_path_op(Task& t, const Call& call, const Return& ret)
{
    FsOp op;
    op.pid = t.tgid;
    op.result = ret.value;
    if (call.name == "ftruncate") {
        QK_TRY_STATUS(strace::need_args(call, 1));
        QK_TRY(fd, strace::parse_fd(call.args[0]));
        if (!fd->path || !fd->path->starts_with('/')) {
            if (ret.value == 0)
                sink_.mark_incomplete("strace did not name the file a file descriptor was truncated through");
            return {};
        }
        op.kind = FsOpKind::truncate;
        op.resolved = *fd->path;
        op.resolved_truncated = op.resolved.size() >= kPathMax;
        sink_.on_fs(op);
        return {};
    }
    const Shape* shape = path_op(call.name);
    int last = std::max({shape->a_dir, shape->a_path, shape->b_dir, shape->b_path, shape->flags});
    QK_TRY_STATUS(strace::need_args(call, static_cast<std::size_t>(last) + 1));
    op.kind = shape->kind;
    auto path = [&](int dir, int arg) -> Result<std::optional<PathArg>> {
        std::optional<std::string> base = cwd_of(t);
        if (dir != kCwd) {
            QK_TRY(d, dirfd_base(t, call.args[dir]));
            base = *d;
        }
        return path_arg(base, call.args[arg], ret.value);
    };
    QK_TRY(a, path(shape->a_dir, shape->a_path));
    if (!*a)
        return {};
    op.a = std::move(**a);
    if (shape->b_path != kNone) {
        QK_TRY(b, path(shape->b_dir, shape->b_path));
        if (!*b)
            return {};
        op.b = std::move(**b);
    }
    if (op.kind == FsOpKind::symlink) {
        auto target = strace::parse_quoted(call.args[0]);
        if (target)
            op.b.name = std::move(target->bytes);
    }
    if (shape->flags != kNone) {
        QK_TRY(f, strace::parse_flags(call.args[shape->flags], shape->lookup));
        op.flags = static_cast<std::uint32_t>(*f);
    }
    if (op.kind == FsOpKind::unlink && (op.flags & AT_REMOVEDIR))
        op.kind = FsOpKind::rmdir;
    sink_.on_fs(op);
    if (op.kind == FsOpKind::rename)
        follow_rename(op);
    return {};
}

}  // namespace qk::record
