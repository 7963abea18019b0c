// SandboxAudit: the audit side of `qk run-many --sandbox`: the run's recorder, each task's rules and
// recording, and the findings gathered into one RunAudit for the summary and --sandbox-report.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/record/recorder.hpp"
#include "qk/rules/rules.hpp"
#include "qk/util/result.hpp"
#include "launcher.hpp"
#include "output_directories.hpp"
#include "recording_launcher.hpp"
#include "qk/run/session.hpp"

namespace qk::run {

class SandboxAudit {
public:
    // Makes the recorder `choice` names and reads the workspace's install (node_modules/.modules.yaml).
    // A recorder named explicitly that cannot record is an error, and so is a .modules.yaml that does
    // not parse; with auto and no recorder working, the run goes on unaudited and no_recorder() says why.
    static Result<std::unique_ptr<SandboxAudit>> open(record::RecorderChoice choice, Session& session);

    const std::string& no_recorder() const { return audit_.no_recorder; }

    // One task being recorded: the launcher its commands go through, its rules, the output
    // directories made for it.
    struct TaskRun {
        std::size_t task = 0;
        rules::Rules rules;
        RecordingLauncher launcher;
        OutputDirectories directories;
    };

    // Before task `i` runs: nullptr when it runs unrecorded (the sandbox is off on its target, its
    // rules cannot be built, no recorder works), which the audit lists with why.
    std::unique_ptr<TaskRun> start(std::size_t i, const std::vector<std::string>& scratch);
    // After its commands ended: its findings, or not audited with why. `interrupted` when the run
    // stopped it; `failed_to_run` holds why it could not run at all.
    void finish(std::unique_ptr<TaskRun> run, bool interrupted, const std::string& failed_to_run = {});
    // Task `i` was restored from the cache: it ran nothing, so it is not audited.
    void restored(std::size_t i);

    // Everything gathered, finished (counts and run-wide views derived).
    audit::RunAudit result();

private:
    SandboxAudit(Session& session) : session_(session) {}
    void add(audit::TaskAudit audit);

    Session& session_;
    std::unique_ptr<record::Recorder> recorder_;
    std::shared_ptr<const rules::InstalledPackages> installed_;
    std::mutex mutex_;
    audit::RunAudit audit_;
};

}  // namespace qk::run
