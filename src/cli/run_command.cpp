#include "run_command.hpp"

#include <unistd.h>

#include <cstdlib>

#include "interrupt.hpp"
#include "qk/util/result.hpp"
#include "qk/run/run_many.hpp"
#include "qk/util/process_secrets.hpp"
#include "qk/util/settings.hpp"

namespace qk::cli {

Settings read_run_settings()
{
    Settings settings = or_fatal(Settings::read());
    // Read once, held in the settings: gone from qk's environment, so that nothing qk starts (git, strace,
    // a task through any path that copies qk's environment) is handed the remote cache's secrets, and their
    // bytes overwritten where /proc/<qk>/environ reads them, which a task of a plain or audited run could.
    const RemoteCacheSettings& remote = settings.remote_cache;
    unsigned secrets = forget_environment_variable("QK_REMOTE_CACHE_TOKEN");
    secrets += forget_environment_variable("QK_REMOTE_CACHE_SIGNATURE_KEY");
    if (url_without_credentials(remote.url) != remote.url)  // a password in the URL is as secret as a token
        secrets += forget_environment_variable("QK_REMOTE_CACHE_URL");
    // The copies in qk's memory: a process of the same user can read it through /proc/<qk>/mem unless qk is
    // undumpable. Only then: it also keeps qk's own core dumps, which are worth having otherwise.
    if (secrets > 0 || !remote.token.empty() || !remote.signature_key.empty())
        or_fatal(make_undumpable());
    return settings;
}

int run_tasks(const RunOptions& options) { return run_tasks(options, read_run_settings()); }

int run_tasks(const RunOptions& options, Settings settings)
{
    run::RunRequest request;
    request.settings = std::move(settings);
    request.tasks.targets = options.targets;
    request.tasks.projects = options.projects;
    request.tasks.exclude = options.exclude;
    request.tasks.single_task = options.single_task;
    request.tasks.task = options.task;
    request.tasks.configuration = options.configuration;
    request.tasks.exclude_task_dependencies = options.exclude_task_dependencies;
    request.directory = options.directory;
    request.parallel = options.parallel;
    request.skip_cache = options.skip_cache;
    request.dry_run = options.dry_run;
    request.output_fd = STDOUT_FILENO;
    request.is_terminal = ::isatty(STDOUT_FILENO) == 1;
    request.verbose = options.verbose;
    if (!options.output_style.empty())
        request.output_style = run::parse_output_style(options.output_style);  // CLI11 checked the name
    if (options.sandbox || !options.sandbox_mode.empty())
        request.sandbox = or_fatal(sandbox::parse_sandbox_mode(options.sandbox_mode));
    request.sandbox_report = options.sandbox_report;
    request.no_wait = options.no_wait;
    request.record = options.record;
    request.report = options.report;
    request.remote_cache = options.remote_cache;
    // CI sets QK_RECORD=audit once for every run: --record --sandbox.
    if (request.settings.record_audit) {
        request.record = true;
        if (request.sandbox == sandbox::SandboxMode::off)
            request.sandbox = sandbox::SandboxMode::audit;
    }
    std::string recorder = options.recorder;
    if (recorder.empty()) {
        recorder = request.settings.recorder_choice.empty() ? "auto" : request.settings.recorder_choice;
        if (auto choice = record::parse_recorder_choice(recorder); !choice)
            throw FatalError("QK_RECORDER: " + choice.error().message);
    }
    request.recorder = or_fatal(record::parse_recorder_choice(recorder));

    request.interrupted = &InterruptWatch::signal_flag();
    auto prepared = run::RunMany::prepare(request);
    if (!prepared) {
        // Stopped while waiting for the workspace lock, most likely: it ends as an interrupted run does.
        if (int sig = InterruptWatch::signal())
            throw FatalError(prepared.error(), 128 + sig);
        throw FatalError(prepared.error());
    }
    auto runner = std::move(*prepared);
    InterruptWatch::on_interrupt([r = runner.get()] { r->cancel(); });
    // A signal while the run was prepared found no runner to cancel: nothing starts.
    if (InterruptWatch::signal())
        runner->cancel();
    auto status = runner->run();
    InterruptWatch::on_interrupt({});
    if (!status)
        throw FatalError(status.error());
    if (int sig = InterruptWatch::signal())
        return 128 + sig;
    return *status;
}

}  // namespace qk::cli
