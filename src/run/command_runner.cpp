#include "command_runner.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <fmt/format.h>

namespace qk::run {

namespace {

using Kind = workspace::RunSpec::Kind;

bool failed(const record::ExitStatus& s) { return s.code != 0 || s.signal != 0; }

// Launchers refuse to start once the token is cancelled; when qk cancelled it, that is no error.
bool refused_after_cancel(const Error& e) { return e.kind == ErrorKind::cancelled; }

Error cannot_start(const TaskContext& task, const std::string& command, const Error& why)
{
    return with_message(why, fmt::format("{}: cannot start the command `{}`: {}", task.id(), command, why.message));
}

}  // namespace

void CommandRunner::cancel()
{
    cancelled_ = true;
    token_.cancel();
}

Result<record::ExitStatus> CommandRunner::run_step(const Step& step, const std::string& cwd, TaskOutput& output)
{
    Result<std::unique_ptr<OutputPipe>> pipe = OutputPipe::open(output);
    if (!pipe)
        return pipe.error();
    record::LaunchRequest request{{"/bin/sh", "-c", step.command}, cwd, step.env, (*pipe)->write_fd()};
    Result<record::ExitStatus> status = launcher_.run(request, token_);
    (*pipe)->finish();
    return status;
}

Result<CommandResult> CommandRunner::run(const workspace::RunSpec& spec, const TaskContext& task,
                                         const LineFn& on_line)
{
    auto start = std::chrono::steady_clock::now();
    auto finish = [&](CommandResult r) {
        r.wall = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
        return r;
    };
    if (!spec.problem.empty())
        return error(fmt::format("{}: {}", task.id(), spec.problem));
    if (spec.kind == Kind::unsupported)
        return error(fmt::format("{}: qk cannot run the executor \"{}\"", task.id(), spec.executor));
    if (spec.kind == Kind::noop || spec.commands.empty()) {
        CommandResult r;
        r.succeeded = !cancelled_;
        r.cancelled = cancelled_;
        return finish(std::move(r));
    }

    std::string cwd = task_directory(spec, task).string();
    struct stat st {};
    if (::stat(cwd.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return Error{fmt::format("{}: its working directory {} does not exist; create it or fix the target's cwd",
                                 task.id(), cwd),
                     ENOENT};
    Result<Environment> env = task_environment(spec, task);
    if (!env)
        return env.error();

    std::vector<Step> steps;
    for (std::size_t i = 0; i < spec.commands.size(); ++i) {
        Environment step_env = *env;
        if (spec.kind == Kind::script) {
            // As `pnpm run` sets them: scripts branch on the event (pre/post hooks) and read the package.
            if (i < spec.lifecycle_events.size())
                step_env.set("npm_lifecycle_event", spec.lifecycle_events[i]);
            step_env.set("npm_lifecycle_script", spec.commands[i]);
            if (!task.package_name.empty())
                step_env.set("npm_package_name", task.package_name);
            if (!task.package_version.empty())
                step_env.set("npm_package_version", task.package_version);
        }
        steps.push_back({spec.commands[i], step_env.entries()});
    }

    TaskOutput output(on_line);
    bool parallel = spec.kind == Kind::commands && spec.parallel && steps.size() > 1;
    Result<CommandResult> result =
        parallel ? run_parallel(steps, cwd, task, output) : run_sequential(steps, cwd, task, output);
    if (!result)
        return result;
    result->output = output.take();
    return finish(std::move(result).value());
}

Result<CommandResult> CommandRunner::run_sequential(const std::vector<Step>& steps, const std::string& cwd,
                                                    const TaskContext& task, TaskOutput& output)
{
    CommandResult r;
    r.succeeded = true;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (cancelled_) {
            r.cancelled = true;
            break;
        }
        Result<record::ExitStatus> status = run_step(steps[i], cwd, output);
        if (!status) {
            if (cancelled_ && refused_after_cancel(status.error())) {
                r.cancelled = true;
                break;
            }
            return cannot_start(task, steps[i].command, status.error());
        }
        r.status = *status;
        r.command = i;
        if (failed(*status)) {
            r.succeeded = false;
            break;
        }
    }
    // A command cancelled midway ends like a failure; the result must still say it was cancelled.
    if (cancelled_)
        r.cancelled = true;
    if (r.cancelled)
        r.succeeded = false;
    return r;
}

Result<CommandResult> CommandRunner::run_parallel(const std::vector<Step>& steps, const std::string& cwd,
                                                  const TaskContext& task, TaskOutput& output)
{
    std::vector<std::optional<Result<record::ExitStatus>>> ends(steps.size());
    std::mutex mutex;
    std::optional<std::size_t> first_failure;
    std::vector<std::thread> threads;
    threads.reserve(steps.size());
    std::optional<Error> no_thread;
    for (std::size_t i = 0; i < steps.size() && !no_thread; ++i) {
        auto body = [&, i] {
            Result<record::ExitStatus> status = run_step(steps[i], cwd, output);
            bool stop_others = false;
            {
                std::lock_guard lock(mutex);
                bool real_failure = status ? failed(*status) : !refused_after_cancel(status.error());
                if (real_failure && !first_failure) {
                    first_failure = i;
                    stop_others = true;
                }
                ends[i] = std::move(status);
            }
            // Nx's parallel run-commands terminates the other commands once one fails. Not when they
            // are being cancelled already: a second cancel would kill them without their SIGTERM grace.
            if (stop_others && !cancelled_)
                token_.cancel();
        };
        try {
            threads.emplace_back(body);
        } catch (const std::system_error& e) {
            no_thread = error(fmt::format("{}: cannot start a thread for the command `{}`: {}", task.id(),
                                          steps[i].command, e.what()));
            token_.cancel();
        }
    }
    for (auto& t : threads)
        t.join();
    if (no_thread)
        return *no_thread;

    for (std::size_t i = 0; i < steps.size(); ++i)
        if (!*ends[i] && !refused_after_cancel(ends[i]->error()))
            return cannot_start(task, steps[i].command, ends[i]->error());

    CommandResult r;
    r.cancelled = cancelled_;
    r.succeeded = !first_failure && !r.cancelled;
    r.command = first_failure.value_or(steps.size() - 1);
    if (*ends[r.command])
        r.status = **ends[r.command];
    return r;
}

}  // namespace qk::run
