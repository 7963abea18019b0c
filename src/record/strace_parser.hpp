// StraceParser: reads `strace -f -y` output, one line at a time, into RecordingSink events. It decodes
// what strace printed and keeps what strace leaves implicit: which pid is a thread of which process,
// each process's cwd, and calls split across lines by other processes' output.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "qk/record/path_resolver.hpp"
#include "qk/record/recording_sink.hpp"
#include "qk/util/result.hpp"
#include "strace_line.hpp"

namespace qk::record {

class StraceParser {
public:
    // `root_cwd`: where the command started (empty: unknown). `root_pid`: the command's pid if known,
    // else the first pid in the output is taken for it. Lines without a pid prefix belong to the only
    // process strace traces at that moment, else to the root.
    explicit StraceParser(RecordingSink& sink, std::string root_cwd = {}, pid_t root_pid = 0);

    // The system calls it decodes, as a `strace -e trace=` list; the others' lines are skipped.
    // `lookups`: the stat family too (Command::record_lookups).
    static std::string_view traced_syscalls(bool lookups = false);
    // Whether `name` is one of the network calls it decodes (socket, connect, the datagram calls).
    static bool decodes_network(std::string_view name);

    // One line, without its newline. An Error names the line number and its text; the parser stays
    // usable, so the lines after it (and the command's exit status) are still read.
    Status feed(std::string_view line);
    // The end of the output: lines held back for a fork that never returned are decoded now.
    Status finish();

    pid_t root_pid() const { return root_; }
    // The command's wait status (W* conventions), once the root process's exit line was read.
    std::optional<int> root_wait_status() const { return root_status_; }
    // The errno of the root's exec when it never ran the command (strace's child failed to exec).
    std::optional<int> root_exec_failure() const { return root_execed_ ? std::nullopt : root_exec_errno_; }
    // Processes (thread group leaders) seen and not yet exited.
    std::vector<pid_t> live_processes() const;

private:
    // A traced thread. Its cwd is shared with the tasks it shares its fs_struct with (CLONE_FS);
    // an empty string means unknown until a chdir or an AT_FDCWD annotation tells.
    struct Task {
        pid_t tgid = 0;
        pid_t ppid = 0;
        std::shared_ptr<std::string> cwd;
    };
    struct HeldLine {
        std::size_t number;
        std::string body;
    };

    Status take(std::size_t number, std::string_view line);
    // One line's body for a known task; errors name the line.
    Status handle(pid_t tid, std::string_view body, std::size_t number);
    Status dispatch(pid_t tid, std::string_view body);
    Status on_status(pid_t tid, std::string_view body);
    Status on_call(pid_t tid, std::string_view text);
    void on_exit(pid_t tid, int wait_status);
    // An execve left unfinished by a process that died: its command line names the process.
    void name_unfinished_exec(pid_t tgid, std::string_view call_text);
    Task& add_task(pid_t tid, pid_t tgid, pid_t ppid, std::shared_ptr<std::string> cwd);
    static bool is_fork_call(std::string_view name);
    bool fork_pending() const;
    Status release_held(pid_t child);
    Status release_orphans();

    // The syscall decoders (strace_syscalls.cpp, strace_process.cpp).
    Status decode(pid_t tid, const strace::Call& call, const strace::Return& ret);
    Status decode_open(Task& t, const strace::Call& call, const strace::Return& ret);
    Status decode_fork(Task& t, const strace::Call& call, const strace::Return& ret);
    Status decode_exec(Task& t, const strace::Call& call, const strace::Return& ret);
    Status decode_chdir(Task& t, const strace::Call& call, const strace::Return& ret);
    Status decode_path_op(Task& t, const strace::Call& call, const strace::Return& ret);
    Status decode_open_handle(Task& t, const strace::Call& call, const strace::Return& ret);
    Status decode_remap(Task& t, const strace::Call& call, const strace::Return& ret);
    // socket, connect and the datagram calls (strace_network.cpp).
    Status decode_network(Task& t, const strace::Call& call, const strace::Return& ret);
    void follow_rename(const FsOp& op);
    // The directory relative names of a *at call start from: the dirfd's -y path, or the cwd.
    Result<std::optional<std::string>> dirfd_base(Task& t, std::string_view arg);
    // A path argument; nullopt when the event cannot be recorded (and the recording says so).
    Result<std::optional<PathArg>> path_arg(const std::optional<std::string>& base, std::string_view arg,
                                            long result);
    std::optional<std::string> cwd_of(const Task& t) const;

    RecordingSink& sink_;
    PathResolver resolver_;
    std::string root_cwd_;
    pid_t root_ = 0;
    bool root_started_ = false;
    std::optional<int> root_status_;
    bool root_execed_ = false;
    std::optional<int> root_exec_errno_;
    std::size_t line_ = 0;
    std::unordered_map<pid_t, Task> tasks_;             // by tid: leaders and threads
    // AF_INET and AF_INET6 sockets by (tgid, fd): whether each is a datagram socket (-y shows neither).
    std::map<std::pair<pid_t, int>, bool> socket_types_;
    std::unordered_map<pid_t, std::string> unfinished_;  // by tid: a call's text up to where strace cut it
    // Lines of pids that appeared before their parent's fork returned, until it does.
    std::unordered_map<pid_t, std::vector<HeldLine>> held_;
};

}  // namespace qk::record
