// The syscall decoders of the strace parser: one complete call line into FsOp / ProcFork / ProcExec.
// They report what the call did as strace showed it; RecordingSink decides what that means.
#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include <fmt/core.h>

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
};

constexpr std::string_view kOthers[] = {"open",   "openat", "openat2", "creat",    "ftruncate", "chdir",
                                        "fchdir", "execve", "execveat", "fork",    "vfork",     "clone",
                                        "clone3", "io_uring_setup"};

const Shape* path_op(std::string_view name)
{
    for (const auto& shape : kPathOps)
        if (shape.name == name)
            return &shape;
    return nullptr;
}

bool decodes(std::string_view name)
{
    for (auto other : kOthers)
        if (other == name)
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

}  // namespace

std::string_view StraceParser::traced_syscalls()
{
    static const std::string list = [] {
        std::string out;
        for (const auto& shape : kPathOps)
            out += std::string(shape.name) + ",";
        for (auto other : kOthers)
            out += std::string(other) + ",";
        out.pop_back();
        return out;
    }();
    return list;
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
    if (name == "io_uring_setup") {
        if (ret.value >= 0)
            sink_.mark_incomplete("io_uring in use: its file operations are invisible to strace");
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
