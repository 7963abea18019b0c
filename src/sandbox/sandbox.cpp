#include "qk/sandbox/sandbox.hpp"

#include "qk/enforce/landlock_abi.hpp"
#include "qk/sandbox/task_rules.hpp"
#include "sandbox_audit.hpp"
#include "sandbox_enforce.hpp"

namespace qk::sandbox {

Status Sandbox::open_common(record::RecorderChoice choice, const RecorderSettings& settings, const std::string& mode)
{
    audit_.mode = mode;
    QK_TRY(installed, rules::InstalledPackages::load(session_.workspace().root(), session_.keys().lockfile()));
    installed_ = std::move(installed).value();
    std::string why;
    QK_TRY(recorder, record::make_recorder(choice, settings, &why, &audit_.recorder_fallback));
    recorder_ = std::move(recorder).value();
    if (recorder_)
        audit_.recorder = std::string(recorder_->name());
    else
        audit_.no_recorder = why;
    return {};
}

Result<rules::Rules> Sandbox::rules_of(std::size_t i, const std::vector<std::string>& scratch)
{
    return task_rules(session_, i, scratch, installed_);
}

const workspace::Task& Sandbox::task(std::size_t i) const
{
    return session_.tasks().tasks()[i];
}

void Sandbox::add(audit::TaskAudit audit)
{
    std::lock_guard lock(mutex_);
    audit_.tasks.push_back(std::move(audit));
}

void Sandbox::restored(std::size_t i)
{
    audit::TaskAudit record{task(i).id, audit::TaskStatus::restored, {}, {}};
    add_to_restored(i, record);
    add(std::move(record));
}

void Sandbox::restored_remote(std::size_t i, audit::TaskAudit record)
{
    record.task = task(i).id;
    record.from_remote_cache = true;
    add(std::move(record));
}

std::optional<audit::TaskAudit> Sandbox::record_of(std::size_t i)
{
    const std::string& id = task(i).id;
    std::lock_guard lock(mutex_);
    // Asked just after the task finished: its record is among the last added.
    for (auto it = audit_.tasks.rbegin(); it != audit_.tasks.rend(); ++it)
        if (it->task == id)
            return *it;
    return std::nullopt;
}

std::optional<std::string> Sandbox::withheld(std::size_t i)
{
    std::optional<audit::TaskAudit> seen = record_of(i);
    if (!seen || seen->status != audit::TaskStatus::enforced || !seen->findings.refused())
        return std::nullopt;
    return std::string("the sandbox refused it what it asked, and a task that goes on without it may give "
                       "another result than without the sandbox");
}

audit::RunAudit Sandbox::header()
{
    std::lock_guard lock(mutex_);
    audit::RunAudit out;
    out.mode = audit_.mode;
    out.recorder = audit_.recorder;
    out.landlock_abi = audit_.landlock_abi;
    out.landlock_only = audit_.landlock_only;
    out.run = audit_.run;
    return out;
}

std::string Sandbox::notice() const
{
    if (!audit_.no_recorder.empty())
        return "qk: the sandbox cannot audit any task: " + audit_.no_recorder + "\n";
    if (!audit_.recorder_fallback.empty())
        return "qk: recording with strace, slower than eBPF, which cannot record here: " + audit_.recorder_fallback +
               "\n";
    return {};
}

std::string SandboxAudit::notice() const
{
    if (audit_.no_recorder.empty())
        return Sandbox::notice();
    if (!audit_tasks_)
        return "qk: --record records nothing, so this run goes on unrecorded: " + audit_.no_recorder + "\n";
    if (record_)
        return "qk: this run goes on unrecorded and unaudited: " + audit_.no_recorder + "\n";
    return Sandbox::notice();
}

audit::RunAudit Sandbox::result()
{
    std::lock_guard lock(mutex_);
    audit::RunAudit out = audit_;
    out.finish();
    return out;
}

Result<std::unique_ptr<Sandbox>> open_sandbox(SandboxMode mode, record::RecorderChoice choice, key::Session& session,
                                              const Settings& settings, bool record)
{
    if (mode == SandboxMode::enforce) {
        // run_many refuses --record with enforce before anything runs; enforce records refusals only.
        (void)record;
        QK_TRY(enforce, SandboxEnforce::open(choice, session, settings));
        return std::unique_ptr<Sandbox>(std::move(enforce).value());
    }
    QK_TRY(audit, SandboxAudit::open(choice, session, settings.recorder, record, mode == SandboxMode::audit));
    return std::unique_ptr<Sandbox>(std::move(audit).value());
}

int machine_landlock_abi()
{
    return enforce::landlock_abi();
}

}  // namespace qk::sandbox
