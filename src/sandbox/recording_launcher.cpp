#include "recording_launcher.hpp"

#include <optional>

namespace qk::sandbox {

Result<record::ExitStatus> RecordingLauncher::run(const record::LaunchRequest& request, record::CancelToken& cancel)
{
    if (cancel.cancelled())
        return error("the run was interrupted");
    std::optional<record::CancelToken::Watch> watch;
    record::Command command;
    command.argv = request.argv;
    command.cwd = request.cwd;
    command.env = request.env;
    command.output_fd = request.output_fd;
    command.own_process_group = true;
    command.start = request.start;
    command.record_probes = options_.probes;  // the audit judges reads and writes only
    command.record_denials = options_.only_denials;
    command.record_only_denials = options_.only_denials;
    command.record_lookups = options_.lookups;
    command.on_start = [&](std::function<void(bool)> stop) { watch.emplace(cancel.watch(std::move(stop))); };
    command.on_finish = [&] { watch.reset(); };
    auto trace = recorder_.record(command);
    watch.reset();
    if (!trace)
        return trace.error();
    if (options_.wrapped)
        trace->recording.forget_root_commands();
    std::lock_guard lock(mutex_);
    recording_.merge(trace->recording);
    return trace->status;
}

}  // namespace qk::sandbox
