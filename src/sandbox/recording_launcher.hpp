// RecordingLauncher: the record::Launcher of a sandboxed task. Each command runs under the run's Recorder, in
// a cgroup of its own, and what it did is merged into the task's one Recording.
#pragma once

#include <mutex>

#include "qk/record/launcher.hpp"
#include "qk/record/recorder.hpp"
#include "qk/record/recording.hpp"

namespace qk::sandbox {

class RecordingLauncher final : public record::Launcher {
public:
    // `only_denials`: nothing but the opens the kernel refused is recorded (enforce lists the reads it
    // refused, and judges writes by its overlay). `probes`: failed lookups too, which a read set saved
    // for the cache keys by their absence (--record).
    // `lookups`: with probes, the stat family's too (enforce over a read mask).
    explicit RecordingLauncher(record::Recorder& recorder, bool only_denials = false, bool probes = false,
                               bool lookups = false)
        : recorder_(recorder), only_denials_(only_denials), probes_(probes), lookups_(lookups)
    {
    }

    // Safe from several threads at once: a task's parallel commands are recorded side by side.
    Result<record::ExitStatus> run(const record::LaunchRequest& request, record::CancelToken& cancel) override;

    // Everything its commands did; read once they have all finished.
    const record::Recording& recording() const { return recording_; }

private:
    record::Recorder& recorder_;
    bool only_denials_, probes_, lookups_;
    std::mutex mutex_;
    record::Recording recording_;
};

}  // namespace qk::sandbox
