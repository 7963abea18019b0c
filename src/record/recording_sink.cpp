#include "qk/record/recording_sink.hpp"
#include "qk/record/recorder.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <sys/wait.h>

#include <cerrno>

#include <fmt/core.h>

namespace qk::record {
namespace {

constexpr std::uint32_t kTmpFile = 020000000;  // __O_TMPFILE: an inode with no name
constexpr std::uint32_t kOpenPath = 010000000; // O_PATH: a handle, no data read

// What a confinement refused: Landlock and DAC say EACCES or EPERM, a read-only bind (qk's cache under
// enforce) EROFS.
bool refusal(int64_t result) { return result == -EACCES || result == -EPERM || result == -EROFS; }
// A change is refused by EOVERFLOW too: the overlay cannot copy up a read mask's stand-in, whose owner
// the task's namespace does not map (renaming or linking a file it may not read).
bool refused_change(int64_t result) { return refusal(result) || result == -EOVERFLOW; }
// A link refused by Landlock across its rules fails with EXDEV (so does one out of the overlay's mount):
// its source was not reached, which is a read refused where the task may not read it.
bool refused_link(const FsOp& op) { return op.kind == FsOpKind::link && op.result == -EXDEV; }

std::string too_long_reason() { return "a path longer than 4096 bytes could not be recorded whole"; }

}  // namespace

bool RecordingSink::resolve(const PathArg& arg, bool follow_last, std::string& out)
{
    if (arg.truncated) {
        out_.mark_incomplete(too_long_reason());
        return false;
    }
    out = resolver_.canonical(arg.base, arg.name, follow_last);
    if (out.size() >= kPathMax) {
        out_.mark_incomplete(too_long_reason());
        return false;
    }
    return true;
}

void RecordingSink::note_spelling(const PathArg& spelled, const std::string& path)
{
    // Most opens spell the path the kernel resolved: skip building the lexical form for those, and for
    // a spelling met before (with the target it had then: a link changed since is a new alias).
    if (spelled.empty() || spelled.truncated || (spelled.name == path && spelled.base.empty()))
        return;
    spelling_.clear();
    spelling_.append(spelled.base).append(1, '\0').append(spelled.name).append(1, '\0').append(path);
    if (spellings_.find(std::string_view(spelling_)) == spellings_.end()) {
        spellings_.emplace(spelling_);
        out_.add_alias(PathResolver::join_lexically(spelled.base, spelled.name), path);
    }
}

void RecordingSink::on_failed_lookup(const FsOp& op)
{
    std::string path;
    if (op.result == -ENOENT) {
        // Nothing is there to follow (a dangling link is probed by its own name): resolving the last
        // component would cost a failed realpath per probe, and compilers probe thousands of paths.
        // Under enforce (denials_), over the overlay's read mask a refused read finds nothing: the
        // process behind it is kept, as a refusal's is.
        if (probes_ && resolve(op.a, false, path))
            out_.add(path, kProbe, denials_ ? op.pid : 0);
        return;
    }
    if (!refusal(op.result) || !denials_)
        return;
    if (op.kind == FsOpKind::open && (op.flags & kOpenPath))
        return;  // an O_PATH handle reads nothing (Landlock does not check it): refused, it denies nothing
    // Refusals are rare: follow the last component as the kernel did before it checked permission, so
    // that a denial names the file refused, as a read names the file read (see kDenied).
    if (!resolve(op.a, true, path))
        return;
    note_spelling(op.a, path);
    const bool change = op.kind == FsOpKind::open && (op.flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC));
    out_.add(path, change ? kDenied | kDeniedChange : kDenied, op.pid);
}

void RecordingSink::on_refused_change(const FsOp& op)
{
    // A change refused (Landlock alone refusing a write outside the outputs, or removing an output
    // directory itself): named as a refused open is, by the path asked for, not followed. A rename or
    // link names both, since either side may have been the one refused. A link's source is not changed
    // but reached by another name (kLinked): refused, it is a read refused, as a refused open is.
    if (!denials_)
        return;
    std::string path;
    if (refused_link(op)) {
        if (linked_source(op, path))
            out_.add(path, kDenied, op.pid);
        return;  // no change of the new name was refused: two file systems, or two sets of rules, met
    }
    if (!refused_change(op.result))
        return;
    switch (op.kind) {
    case FsOpKind::rename:
        if (resolve(op.a, false, path))
            out_.add(path, kDenied | kDeniedChange, op.pid);
        if (resolve(op.b, false, path))
            out_.add(path, kDenied | kDeniedChange, op.pid);
        break;
    case FsOpKind::link:
        if (linked_source(op, path))
            out_.add(path, kDenied, op.pid);
        if (resolve(op.b, false, path))
            out_.add(path, kDenied | kDeniedChange, op.pid);
        break;
    case FsOpKind::unlink:
    case FsOpKind::rmdir:
    case FsOpKind::mkdir:
    case FsOpKind::symlink:
    case FsOpKind::mknod:
    case FsOpKind::truncate:
        if (op.resolved.empty() && resolve(op.a, false, path))
            out_.add(path, kDenied | kDeniedChange, op.pid);
        break;
    default:
        break;
    }
}

bool RecordingSink::linked_source(const FsOp& op, std::string& out)
{
    // AT_EMPTY_PATH links the descriptor itself: its path is the base the engine resolved.
    const bool follow = op.flags & AT_SYMLINK_FOLLOW;
    if (!resolve(op.a, follow, out))
        return false;
    // The kernel's name of a file without one (an O_TMPFILE, or unlinked since it was opened).
    constexpr std::string_view kDeleted = " (deleted)";
    return !out.empty() && !std::string_view(out).ends_with(kDeleted);
}

void RecordingSink::on_open(const FsOp& op)
{
    if (op.flags & kTmpFile)
        return;  // nothing named yet: a later linkat gives it a name, recorded as a creation
    if (op.result < 0) {
        on_failed_lookup(op);
        return;
    }
    if (op.flags & kOpenPath)
        return;
    std::string path = op.resolved;
    if (op.resolved_truncated || path.size() >= kPathMax) {
        out_.mark_incomplete(too_long_reason());
        return;
    }
    if (path.empty() && !resolve(op.a, true, path))
        return;
    note_spelling(op.a, path);

    if (op.directory) {
        out_.add(path, kList);
        return;
    }
    std::uint16_t access = 0;
    const auto mode = op.flags & O_ACCMODE;
    if (mode == O_RDONLY || mode == O_RDWR)
        access |= kRead;
    if (mode == O_WRONLY || mode == O_RDWR || (op.flags & O_TRUNC))
        access |= kWrite;
    if (op.created)
        access |= kCreate;
    out_.add(path, access, op.pid);
}

RecordingSink::RecordingSink(Recording& out, const Command& cmd) : RecordingSink(out)
{
    if (!cmd.record_probes)
        skip_probes();
    if (cmd.record_denials)
        keep_denials();
    if (cmd.record_only_denials)
        keep_only_denials();
}

void RecordingSink::on_fs(const FsOp& op)
{
    if (only_denials_ && op.result >= 0)
        return;
    if (op.kind == FsOpKind::open) {
        on_open(op);
        return;
    }
    if (op.kind == FsOpKind::exec) {
        if (op.result < 0)  // successful execs arrive as ProcExec
            on_failed_lookup(op);
        return;
    }
    if (op.kind == FsOpKind::look) {
        // Only asked for (record_lookups): a probe, or a refusal, as an open's; never what it found.
        if (op.result == -ENOENT || op.result == -EACCES)
            on_failed_lookup(op);
        return;
    }
    if (op.result < 0) {
        on_refused_change(op);
        return;
    }
    std::string a, b;
    switch (op.kind) {
    case FsOpKind::rename:
        if (!resolve(op.a, false, a) || !resolve(op.b, false, b))
            return;
        out_.add_rename(a, b);
        if (op.flags & RENAME_EXCHANGE)
            out_.add_rename(b, a);
        break;
    case FsOpKind::unlink:
    case FsOpKind::rmdir:
        if (resolve(op.a, false, a))
            out_.add(a, kRemove, op.pid);
        break;
    case FsOpKind::mkdir:
        if (resolve(op.a, false, a))
            out_.add(a, kCreate, op.pid);
        break;
    case FsOpKind::link:
        // The source is neither read nor written, but a new name for it appears, and through it the
        // content: kLinked, which the audit judges as a read. A source with no name (an O_TMPFILE or
        // deleted file given one through its descriptor) links nothing the workspace holds.
        if (resolve(op.b, false, b))
            out_.add(b, kCreate, op.pid);
        if (linked_source(op, a))
            out_.add(a, kLinked, op.pid);
        break;
    case FsOpKind::symlink:
    case FsOpKind::mknod:  // a regular file (or a FIFO, a device node): a new name all the same
        if (resolve(op.a, false, a))
            out_.add(a, kCreate, op.pid);
        break;
    case FsOpKind::remap:
        out_.mark_incomplete(fmt::format("process {} called {}: from then on its paths may name files through "
                                         "mounts of its own, which the recording cannot map back",
                                         op.pid, op.call));
        break;
    case FsOpKind::truncate:
        if (!op.resolved.empty()) {
            out_.add(op.resolved, kWrite, op.pid);
        } else if (resolve(op.a, true, a)) {
            out_.add(a, kWrite, op.pid);
        }
        break;
    case FsOpKind::chdir:
        // Engines resolve relative paths against the cwd themselves; a chdir changes no file.
        if (op.resolved_truncated)
            out_.mark_incomplete(too_long_reason());
        break;
    case FsOpKind::open:
    case FsOpKind::exec:
    case FsOpKind::look:
        break;
    }
}

void RecordingSink::on_fork(const ProcFork& fork)
{
    out_.process(fork.child).ppid = fork.parent;
    out_.process(fork.parent);
}

void RecordingSink::on_exec(const ProcExec& exec)
{
    Process& p = out_.process(exec.pid);
    if (exec.ppid)
        p.ppid = exec.ppid;
    p.argv = exec.argv;
    if (exec.elf32)
        out_.mark_incomplete("a 32-bit program ran, whose system calls the recorder does not decode");
    if (only_denials_)
        return;
    std::string path = exec.resolved;
    if (path.empty() && !resolve(exec.file, true, path))
        return;
    if (path.size() >= kPathMax) {
        out_.mark_incomplete(too_long_reason());
        return;
    }
    out_.add(path, kRead, exec.pid);
}

void RecordingSink::on_exit(const ProcExit& exit)
{
    Process& p = out_.process(exit.pid);
    if (WIFSIGNALED(exit.wait_status))
        p.signal = WTERMSIG(exit.wait_status);
    else
        p.exit_code = WEXITSTATUS(exit.wait_status);
}

}  // namespace qk::record
