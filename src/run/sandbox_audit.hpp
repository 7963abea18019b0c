// SandboxAudit: `qk run-many --sandbox` (audit): each task recorded, what it did judged by its rules.
#pragma once

#include <memory>

#include "recording_launcher.hpp"
#include "sandbox.hpp"

namespace qk::run {

class SandboxAudit final : public Sandbox {
public:
    // With auto and no recorder working, the run goes on unaudited and notice() says why.
    static Result<std::unique_ptr<SandboxAudit>> open(record::RecorderChoice choice, Session& session);

    // Unrecorded (nullptr task) when the sandbox is off on its target, its rules cannot be built or no
    // recorder works, which the audit lists with why. Audit never refuses a task.
    Start start(std::size_t i, const std::vector<std::string>& scratch) override;
    Status finish(std::unique_ptr<TaskSandbox> run, bool interrupted, const std::string& failed_to_run) override;

private:
    explicit SandboxAudit(Session& session) : Sandbox(session) {}

    class Recorded;
};

}  // namespace qk::run
