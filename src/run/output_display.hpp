// OutputDisplay: what a run prints. Every line of a task as "<task> | <line>", a line when a task ends,
// the closing summary; on a terminal also a status area at the bottom (running tasks, counts) redrawn
// in place. Thread-safe: tasks report from their own threads.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "qk/record/recorder.hpp"
#include "qk/run/output_style.hpp"

namespace qk::run {

// Where the display writes. Each call is one piece that must stay whole: one line in plain mode.
using Sink = std::function<void(std::string_view text)>;

// Writes all of each piece to `fd` in one write(2) where it can. Errors are ignored: a closed stdout
// must not stop the run.
Sink fd_sink(int fd);
// The width of the terminal on `fd`, or 80.
int terminal_columns(int fd);

struct DisplayOptions {
    bool is_terminal = false;  // the caller decides (isatty): colours and the status area
    int columns = 80;          // status lines are cut to fit, or they would wrap and break the redraw
    OutputStyle style = OutputStyle::stream;
    // Whether a task restored from the cache prints what it printed when it ran, before the line saying
    // it was restored: a fully cached run is one line a task without it.
    bool replay_restored = true;
};

// What the closing summary says of the run as a whole.
struct RunSummary {
    std::vector<std::string> targets;  // as asked for: {"build", "test"}
    std::size_t projects = 0;          // the projects they were asked for
    std::size_t dependency_tasks = 0;  // tasks of other projects that they depend on
    bool interrupted = false;
    // Results the cache refused to store for what they hold (too big for an entry, a set-id file, a link
    // that points away): each task and why, said again at the end since its own line scrolls away.
    struct NotCached {
        std::string task;
        std::string why;
    };
    std::vector<NotCached> not_cached;
    // Of the tasks restored from the cache, how many the remote cache brought; and its block, what the run
    // shared and what not, and why (remote_summary), said last. Empty without a remote cache.
    std::size_t restored_remote = 0;
    std::string remote;
};

// "exit code 2", "killed by signal 9 (SIGKILL)".
std::string describe_exit(const record::ExitStatus& status);

class OutputDisplay {
public:
    // `task_ids`: every task of the run, in the order the summary lists them; prefixes are padded to
    // the longest.
    OutputDisplay(const std::vector<std::string>& task_ids, Sink sink, DisplayOptions options = {});
    OutputDisplay(const OutputDisplay&) = delete;
    OutputDisplay& operator=(const OutputDisplay&) = delete;
    ~OutputDisplay();

    void started(std::string_view id);
    // A line of the task's command output, as the command wrote it (colours and all: its own). Printed
    // at once (stream), when the task ends (static), or only if it fails (dynamic).
    void line(std::string_view id, std::string_view text);
    // A line qk says about the task, "qk: <message>", printed at once in every style: the message may
    // quote paths and names from the workspace, so it is escaped (qk::printable), on one line.
    void note(std::string_view id, std::string_view message);
    void finished(std::string_view id, bool succeeded, const record::ExitStatus& status,
                  std::chrono::milliseconds wall);
    // A result was stored for a task that declares its network ("qk:sandbox": {"network": true or a
    // list}): what it fetched is in no key, so its key alone does not reproduce it. Said once, counted, in
    // the summary.
    void stored_with_network(std::string_view id);
    // Replays the task's cached terminal output, then says it came from the cache.
    void restored(std::string_view id, std::string_view terminal_output);
    void skipped(std::string_view id, std::string_view failed_dependency);
    // Clears the status area and prints the summary. Call once, at the end.
    void summary(const RunSummary& run);

private:
    enum class State { pending, running, succeeded, failed, restored, skipped };
    struct Task {
        std::string id;
        std::string shown;  // id as printed: a project named after a directory may hold terminal escapes
        State state = State::pending;
        std::chrono::steady_clock::time_point start;
        record::ExitStatus status;
        std::string because;  // skipped: the failed dependency, as printed
        std::vector<std::string> held;  // static and dynamic: its lines, prefixed, until it ends
        bool network = false;           // stored a result while declaring its network
    };

    Task& task_locked(std::string_view id);
    std::string prefix_locked(const Task& task) const;
    std::string mark(std::string_view symbol, int colour) const;
    std::string output_line_locked(const Task& task, std::string_view text) const;
    bool status_area() const { return options_.is_terminal && options_.style != OutputStyle::grouped; }
    // Prints `lines` (each ending in '\n'): one write each in plain mode; on a terminal one write
    // that erases the status area, prints them and draws it again.
    void emit_locked(const std::vector<std::string>& lines);
    std::string erase_status_locked();
    std::string draw_status_locked();
    std::vector<std::string> status_lines_locked() const;
    std::string summary_text_locked(const RunSummary& run) const;
    std::string network_line_locked() const;
    void timer_loop();
    void stop_timer();

    Sink sink_;
    DisplayOptions options_;
    std::mutex mutex_;
    std::vector<Task> tasks_;
    std::unordered_map<std::string, std::size_t> index_;
    std::size_t width_ = 0;
    std::size_t status_rows_ = 0;    // lines of the status area on screen now
    std::vector<std::string> drawn_; // what they say
    bool closed_ = false;            // the summary is out: no status area any more

    std::condition_variable timer_wake_;
    bool timer_stop_ = false;
    std::thread timer_;
};

}  // namespace qk::run
