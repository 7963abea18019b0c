// SandboxAudit: `qk run-many --sandbox` (audit): each task recorded, what it did judged by its rules.
// With --record it also gives each task with qk:ultracache the read set to save with its result, from
// that one recording; `--record` alone records only those tasks, and judges nothing.
#pragma once

#include <map>
#include <memory>

#include "qk/sandbox/sandbox.hpp"
#include "recording_launcher.hpp"

namespace qk::sandbox {

class SandboxAudit final : public Sandbox {
public:
    // With auto and no recorder working, the run goes on unaudited and notice() says why.
    static Result<std::unique_ptr<SandboxAudit>> open(record::RecorderChoice choice, key::Session& session,
                                                      const RecorderSettings& settings, bool record, bool audit);

    // Unrecorded (nullptr task) when the sandbox is off on its target, its rules cannot be built or no
    // recorder works, which the audit lists with why. Audit never refuses a task.
    Start start(std::size_t i, const std::vector<std::string>& scratch) override;
    Status finish(std::unique_ptr<TaskSandbox> run, bool interrupted, const std::string& failed_to_run) override;
    std::optional<Result<key::ReadSet>> take_read_set(std::size_t i) override;
    bool records_for_cache(std::size_t i) const override { return for_cache(i) && recorder_; }
    std::string notice() const override;
    void add_to_restored(std::size_t i, audit::TaskAudit& record) override;

private:
    SandboxAudit(key::Session& session, bool record, bool audit)
        : Sandbox(session), record_(record), audit_tasks_(audit)
    {
    }
    // Recorded for the cache: --record, qk:ultracache, and the sandbox not turned off on its target
    // (such a task is neither recorded nor keyed by its reads, and is stored as without --record).
    bool for_cache(std::size_t i) const
    {
        return record_ && task(i).target->has_ultracache && task(i).target->sandbox.enabled;
    }

    bool record_, audit_tasks_;
    std::map<std::size_t, Result<key::ReadSet>> read_sets_;  // guarded by mutex_

    class Recorded;
};

}  // namespace qk::sandbox
