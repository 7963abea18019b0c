// The strace parser's decoders for calls that change a process rather than a file: the fork family,
// exec, chdir/fchdir; and keeping each process's cwd right when a directory it is in is renamed.
#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <unistd.h>

#include <unordered_set>

#include <fmt/core.h>

#include "qk/util/path_within.hpp"
#include "qk/util/unique_fd.hpp"
#include "strace_names.hpp"
#include "strace_parser.hpp"

namespace qk::record {
namespace {

using strace::Call;
using strace::Return;

std::string_view trim_blanks(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// The argv the kernel runs after the exec: for a "#!" script, binfmt_script's [interpreter, its one
// optional argument, the file name as passed, argv[1]...], nested as the kernel allows. strace shows
// only the argv passed, so the script's first line is read now: it may have changed since the exec.
std::vector<std::string> argv_as_run(std::string path, std::string filename, std::vector<std::string> argv)
{
    constexpr int kMaxNesting = 4;     // BINPRM_MAX_RECURSION
    constexpr std::size_t kHead = 256; // BINPRM_BUF_SIZE: all of the line the kernel reads
    for (int depth = 0; depth < kMaxNesting; depth++) {
        UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
        char buf[kHead];
        ssize_t n = fd.valid() ? ::pread(fd.get(), buf, sizeof(buf), 0) : -1;
        if (n < 2 || buf[0] != '#' || buf[1] != '!')
            break;
        std::string_view line(buf + 2, static_cast<std::size_t>(n) - 2);
        line = trim_blanks(line.substr(0, line.find('\n')));
        auto blank = line.find_first_of(" \t");
        std::string interpreter(line.substr(0, blank));
        if (interpreter.empty())
            break;
        std::vector<std::string> run = {interpreter};
        if (blank != std::string_view::npos)
            if (auto arg = trim_blanks(line.substr(blank)); !arg.empty())
                run.emplace_back(arg);
        run.push_back(filename);
        run.insert(run.end(), argv.empty() ? argv.end() : argv.begin() + 1, argv.end());
        argv = std::move(run);
        path = filename = interpreter;
    }
    return argv;
}

}  // namespace

Status StraceParser::decode_chdir(Task& t, const Call& call, const Return& ret)
{
    QK_TRY_STATUS(strace::need_args(call, 1));
    FsOp op;
    op.kind = FsOpKind::chdir;
    op.pid = t.tgid;
    op.result = ret.value;
    if (call.name == "chdir") {
        QK_TRY(a, path_arg(cwd_of(t), call.args[0], ret.value));
        if (*a) {
            op.a = std::move(**a);
            // The kernel follows every symlink to the new cwd; resolving now races with renames.
            if (ret.value == 0 && !op.a.truncated)
                op.resolved = resolver_.canonical(op.a.base, op.a.name, true);
            op.resolved_truncated = op.a.truncated;
        }
    } else {
        QK_TRY(fd, strace::parse_fd(call.args[0]));
        if (fd->path && fd->path->starts_with('/'))
            op.resolved = *fd->path;
    }
    if (ret.value != 0)
        return {};
    if (op.resolved.size() >= kPathMax)
        op.resolved_truncated = true;
    // Unknown until the next AT_FDCWD annotation when strace did not show where it went.
    *t.cwd = op.resolved_truncated ? std::string() : op.resolved;
    sink_.on_fs(op);
    return {};
}

void StraceParser::follow_rename(const FsOp& op)
{
    // A cwd is a directory, not a name: when it (or a directory above it) is renamed, the process's
    // relative names start from the new name. Only renames strace shows are seen.
    if (op.result != 0 || op.a.truncated || op.b.truncated)
        return;
    std::string from = resolver_.canonical(op.a.base, op.a.name, false);
    std::string to = resolver_.canonical(op.b.base, op.b.name, false);
    auto move = [](std::string& cwd, const std::string& a, const std::string& b) {
        if (!is_within(cwd, a))
            return false;
        cwd = b + cwd.substr(a.size());
        return true;
    };
    std::unordered_set<std::string*> seen;
    for (auto& [tid, task] : tasks_) {
        std::string* cwd = task.cwd.get();
        if (!cwd || cwd->empty() || !seen.insert(cwd).second)
            continue;
        if (!move(*cwd, from, to) && (op.flags & RENAME_EXCHANGE))
            move(*cwd, to, from);
    }
}

Status StraceParser::decode_exec(Task& t, const Call& call, const Return& ret)
{
    bool at = call.name == "execveat";
    QK_TRY_STATUS(strace::need_args(call, at ? 5 : 3));
    std::optional<std::string> base = cwd_of(t);
    long dirfd = strace::kAtFdcwd;
    if (at) {
        QK_TRY(fd, strace::parse_fd(call.args[0]));
        dirfd = fd->fd;
        QK_TRY(d, dirfd_base(t, call.args[0]));
        base = *d;
    }
    // execveat(fd, "", ..., AT_EMPTY_PATH) runs the file behind fd: an empty name relative to it.
    QK_TRY(a, path_arg(base, call.args[at ? 1 : 0], ret.value));
    if (t.tgid == root_ && ret.value < 0)
        root_exec_errno_ = static_cast<int>(-ret.value);
    root_execed_ |= t.tgid == root_ && ret.value == 0;
    if (ret.value != 0) {
        if (*a) {
            FsOp op;
            op.kind = FsOpKind::exec;
            op.pid = t.tgid;
            op.result = ret.value;
            op.a = std::move(**a);
            sink_.on_fs(op);
        }
        return {};
    }
    QK_TRY(argv, strace::parse_string_array(call.args[at ? 2 : 1]));
    ProcExec exec;
    exec.pid = t.tgid;
    exec.ppid = t.ppid;
    if (*a) {
        exec.file = std::move(**a);
        // The name the kernel gives a script's interpreter: as passed, or /dev/fd/N[/name] for a dirfd.
        const std::string& name = exec.file.name;
        std::string filename = !at || dirfd == strace::kAtFdcwd || name.starts_with('/')
                                   ? name
                                   : fmt::format("/dev/fd/{}{}{}", dirfd, name.empty() ? "" : "/", name);
        std::string path = name.starts_with('/') ? name : exec.file.base + (name.empty() ? "" : "/" + name);
        exec.argv = argv_as_run(path, filename, std::move(*argv));
    } else {
        exec.file.truncated = true;  // the recording already says why it is incomplete
        exec.argv = std::move(*argv);
    }
    // The kernel ends the process's other threads on exec; their pids are free again.
    pid_t tgid = t.tgid;
    std::erase_if(tasks_, [&](const auto& entry) { return entry.second.tgid == tgid && entry.first != tgid; });
    sink_.on_exec(exec);
    return {};
}

Status StraceParser::decode_fork(Task& t, const Call& call, const Return& ret)
{
    if (ret.value <= 0)
        return {};
    std::uint64_t flags = 0;
    if (call.name == "vfork") {
        flags = CLONE_VM | CLONE_VFORK;
    } else if (call.name == "clone" || call.name == "clone3") {
        auto text = call.name == "clone" ? strace::keyed_arg(call.args, "flags")
                  : call.args.empty()    ? std::nullopt
                                         : strace::struct_field(call.args[0], "flags");
        if (!text)
            return error(fmt::format("{} without flags", call.name));
        QK_TRY(f, strace::parse_flags(*text, strace::clone_flag));
        flags = *f;
    }
    auto child = static_cast<pid_t>(ret.value);
    bool thread = flags & CLONE_THREAD;
    // Without CLONE_FS the child gets a copy of the cwd; with it, the very same one.
    auto cwd = (flags & CLONE_FS) ? t.cwd : std::make_shared<std::string>(t.cwd ? *t.cwd : std::string());
    pid_t parent = t.tgid;
    add_task(child, thread ? t.tgid : child, thread ? t.ppid : parent, std::move(cwd));
    if (!thread)
        sink_.on_fork(ProcFork{parent, child});
    return release_held(child);
}

}  // namespace qk::record
