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
    command.record_probes = probes_;  // the audit judges reads and writes only
    command.record_denials = only_denials_;
    command.record_only_denials = only_denials_;
    command.record_lookups = lookups_;
    command.on_start = [&](std::function<void(bool)> stop) { watch.emplace(cancel.watch(std::move(stop))); };
    command.on_finish = [&] { watch.reset(); };
    auto trace = recorder_.record(command);
    watch.reset();
    if (!trace)
        return trace.error();
    std::lock_guard lock(mutex_);
    recording_.merge(trace->recording);
    return trace->status;
}

}  // namespace qk::sandbox
