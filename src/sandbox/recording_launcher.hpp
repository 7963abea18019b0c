// RecordingLauncher: the record::Launcher of a sandboxed task. Each command runs under the run's Recorder, in
// a cgroup of its own, and what it did is merged into the task's one Recording.
#pragma once

#include <mutex>

#include "qk/record/launcher.hpp"
#include "qk/record/recorder.hpp"
#include "qk/record/recording.hpp"

namespace qk::sandbox {

// How a RecordingLauncher records (a struct of its own: a nested one with member initialisers cannot be
// a default argument of its class).
struct RecordingOptions {
    // Nothing but the opens the kernel refused is recorded (enforce lists the reads it refused, and
    // judges writes by its overlay).
    bool only_denials = false;
    // Failed lookups too, which a read set saved for the cache keys by their absence (--record).
    bool probes = false;
    // With probes, the stat family's too (enforce over a read mask).
    bool lookups = false;
    // Each command's first process is qk's own wrapper (qk-sandbox-exec), not the task's: left out of
    // the chain of processes a finding names, which ends at the task's command.
    bool wrapped = false;
};

class RecordingLauncher final : public record::Launcher {
public:
    explicit RecordingLauncher(record::Recorder& recorder, RecordingOptions options = {})
        : recorder_(recorder), options_(options)
    {
    }

    // Safe from several threads at once: a task's parallel commands are recorded side by side.
    Result<record::ExitStatus> run(const record::LaunchRequest& request, record::CancelToken& cancel) override;

    // Everything its commands did; read once they have all finished.
    const record::Recording& recording() const { return recording_; }

private:
    record::Recorder& recorder_;
    RecordingOptions options_;
    std::mutex mutex_;
    record::Recording recording_;
};

}  // namespace qk::sandbox
