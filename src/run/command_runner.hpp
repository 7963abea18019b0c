// CommandRunner: runs one task's commands as its RunSpec says (run-commands, a package.json script,
// noop), through a Launcher, delivering their output line by line as it comes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

#include "qk/record/launcher.hpp"
#include "qk/record/recorder.hpp"
#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"
#include "output_pipe.hpp"
#include "task_env.hpp"

namespace qk::run {

struct CommandResult {
    bool succeeded = false;
    // cancel() was called: the commands were stopped, so the result says nothing of the task itself.
    bool cancelled = false;
    record::ExitStatus status;  // of the command that decided: the first to fail, else the last
    std::size_t command = 0;    // that command's index in RunSpec::commands
    std::string output;         // stdout and stderr of every command, as written (the terminal log)
    std::chrono::milliseconds wall{0};
};

// One per task; run() once. cancel() may come from any thread.
class CommandRunner {
public:
    using LineFn = TaskOutput::LineFn;

    explicit CommandRunner(record::Launcher& launcher) : launcher_(launcher) {}
    CommandRunner(const CommandRunner&) = delete;
    CommandRunner& operator=(const CommandRunner&) = delete;

    // Runs the commands: in `parallel`, side by side, the others stopped when one fails (as Nx does);
    // otherwise one after another up to the first failure. Each is `/bin/sh -c <command>` in the task's
    // directory. `on_line` gets each line of output (from the reading threads, one at a time). An Error
    // when the task cannot run: a RunSpec problem, its directory or envFile missing, a command that
    // could not start (the message names it).
    Result<CommandResult> run(const workspace::RunSpec& spec, const TaskContext& task, const LineFn& on_line);

    // Stops the running commands (SIGTERM to their process groups; a second call sends SIGKILL) and
    // starts no more.
    void cancel();

private:
    struct Step {
        std::string command;
        std::vector<std::string> env;
    };
    // Runs one command with its output into `output`.
    Result<record::ExitStatus> run_step(const Step& step, const std::string& cwd, TaskOutput& output);
    Result<CommandResult> run_sequential(const std::vector<Step>& steps, const std::string& cwd,
                                         const TaskContext& task, TaskOutput& output);
    Result<CommandResult> run_parallel(const std::vector<Step>& steps, const std::string& cwd,
                                       const TaskContext& task, TaskOutput& output);

    record::Launcher& launcher_;
    record::CancelToken token_;
    std::atomic<bool> cancelled_{false};
};

}  // namespace qk::run
