// strace's output while the command runs: the FIFO strace writes to, and the reader that feeds it to
// the parser line by line (memory grows with distinct paths, not events) and, once the command has
// exited, kills what it left running.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"
#include "qk/record/cgroup.hpp"
#include "strace_parser.hpp"

namespace qk::record {

// A FIFO in a private temporary directory, removed with it. We hold a write end of our own until
// strace has exited (release_hold): the reader sees EOF only then, whether strace opened it or not.
// The directory is flock'ed while we live, so that a later qk removes it if we are killed outright.
class StraceOutputFifo {
public:
    static Result<StraceOutputFifo> create();
    StraceOutputFifo(StraceOutputFifo&& o) noexcept;
    StraceOutputFifo& operator=(StraceOutputFifo&&) = delete;
    ~StraceOutputFifo();

    const std::string& path() const { return path_; }
    int read_fd() const { return read_.get(); }
    void release_hold() { hold_.reset(); }

private:
    StraceOutputFifo() = default;
    std::string dir_, path_;
    UniqueFd lock_, read_, hold_;
};

// The processes `tracer` traces now (from /proc): the command's, when no cgroup holds them.
std::vector<pid_t> tracees_of(pid_t tracer);

class StraceOutputReader {
public:
    // `cgroup` may be null: leftovers are then the parser's live processes still traced by strace.
    StraceOutputReader(StraceParser& parser, const TaskCgroup* cgroup, pid_t strace_pid)
        : parser_(parser), cgroup_(cgroup), strace_pid_(strace_pid)
    {
    }

    // Reads `fd` to EOF, on the reader thread. Never stops early: strace would block on a full FIFO.
    void run(int fd);
    // Waits, from another thread, until the command's first process shows in the output (true) or the
    // output ended without it (false): until then there is nothing to stop but strace itself.
    bool wait_root_started();

    const std::optional<Error>& first_error() const { return first_error_; }
    int errors() const { return errors_; }
    int killed() const { return static_cast<int>(killed_.size()); }

private:
    void feed(std::string_view line);
    void note(const Status& s);
    void kill_leftovers();

    void announce(bool ended);

    StraceParser& parser_;
    const TaskCgroup* cgroup_;
    pid_t strace_pid_;
    bool root_announced_ = false;  // reader thread only
    std::mutex start_mutex_;
    std::condition_variable start_cv_;
    bool root_started_ = false, output_ended_ = false;  // under start_mutex_
    bool root_ended_ = false;
    std::set<pid_t> killed_;
    std::optional<Error> first_error_;
    int errors_ = 0;
};

}  // namespace qk::record
