// The recorder-neutral events every engine (eBPF, strace, replay) decodes its input into. They carry
// paths the way the engine saw them; RecordingSink gives them meaning, so that the engines agree by
// construction on what an event means and differ only in what they can see.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace qk::record {

// A path argument: `name` as the command passed it, relative to `base` (an absolute directory the
// engine resolved: the dirfd's or the cwd) when it does not start with '/'.
struct PathArg {
    std::string base;
    std::string name;
    bool truncated = false;  // the engine could not hold it whole
    bool empty() const { return name.empty(); }
};

// remap: a call after which paths may name aliases (a mount, pivot_root, setns into another mount
// namespace, a detached mount): the recording cannot say which files such paths are.
// look: a stat, statx, access or faccessat that found nothing (recorded only when asked: see
// Command::record_lookups).
enum class FsOpKind { open, rename, unlink, rmdir, mkdir, link, symlink, truncate, chdir, exec, mknod, remap, look };

// One file syscall that returned.
struct FsOp {
    FsOpKind kind = FsOpKind::open;
    pid_t pid = 0;
    long result = 0;          // an fd, 0, or -errno
    std::uint32_t flags = 0;  // open flags (O_*), rename flags (RENAME_*), *at flags (AT_*)
    // The kernel's own absolute path of the file the call acted on, when the engine has it: the opened
    // file, ftruncate's file, the new cwd of chdir/fchdir. Canonical: symlinks followed.
    std::string resolved;
    bool resolved_truncated = false;
    PathArg a;  // the (first) path argument
    PathArg b;  // the second: rename's and link's new path
    // Whether the open created the file: eBPF knows (FMODE_CREATED); strace knows only for O_EXCL.
    bool created = false;
    bool created_known = false;
    // Whether the opened file is a directory; strace tells only by O_DIRECTORY or a later lstat.
    bool directory = false;
    const char* call = "";  // remap: the syscall's name
};

// A network call of an AF_INET or AF_INET6 socket (bpf/events.h, enum qk_net_op): a connect, whatever it
// returned, or a datagram sent or received. Stream sockets' sends and receives are not events.
enum class NetOpKind { connect, send, recv };

struct NetOp {
    NetOpKind kind = NetOpKind::connect;
    pid_t pid = 0;
    long result = 0;  // connect: 0 or -errno; send, recv: bytes
    int fd = -1;
    bool datagram = false;  // SOCK_DGRAM (UDP); otherwise a stream (TCP)
    // The address passed, as text ("10.0.0.1", "2001:db8::1"); empty for a datagram on a connected
    // socket (its connect named the endpoint).
    std::string address;
    std::uint16_t port = 0;
    // A datagram's first bytes: a DNS query names what was looked up, its answer what the name resolved to.
    std::string payload;
};

struct ProcFork {
    pid_t parent = 0;
    pid_t child = 0;
};

// A successful exec.
struct ProcExec {
    pid_t pid = 0;
    pid_t ppid = 0;             // 0 when the engine does not know it
    PathArg file;               // the file as passed to exec
    std::string resolved;       // the executable's canonical path, when the engine has it
    std::vector<std::string> argv;
    bool elf32 = false;         // a 32-bit program: its syscalls are not decoded
};

struct ProcExit {
    pid_t pid = 0;
    int wait_status = 0;  // as wait(2) reports it
};

}  // namespace qk::record
