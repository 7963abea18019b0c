#include "sandbox_audit.hpp"

#include <fmt/core.h>

#include "qk/audit/classify.hpp"
#include "qk/run/task_rules.hpp"

namespace qk::run {

Result<std::unique_ptr<SandboxAudit>> SandboxAudit::open(record::RecorderChoice choice, Session& session)
{
    std::unique_ptr<SandboxAudit> self(new SandboxAudit(session));
    QK_TRY(installed, rules::InstalledPackages::load(session.workspace().root(), session.keys().lockfile()));
    self->installed_ = std::move(installed).value();
    std::string why;
    QK_TRY(recorder, record::make_recorder(choice, &why));
    self->recorder_ = std::move(recorder).value();
    if (self->recorder_)
        self->audit_.recorder = std::string(self->recorder_->name());
    else
        self->audit_.no_recorder = why;
    return self;
}

void SandboxAudit::add(audit::TaskAudit audit)
{
    std::lock_guard lock(mutex_);
    audit_.tasks.push_back(std::move(audit));
}

std::unique_ptr<SandboxAudit::TaskRun> SandboxAudit::start(std::size_t i, const std::vector<std::string>& scratch)
{
    const workspace::Task& t = session_.tasks().tasks()[i];
    if (!t.target->sandbox.enabled) {
        add({t.id, audit::TaskStatus::unsandboxed, "\"qk:sandbox\": false on its target", {}});
        return nullptr;
    }
    if (!recorder_) {
        add({t.id, audit::TaskStatus::not_audited, "no recorder works here", {}});
        return nullptr;
    }
    auto rules = task_rules(session_, i, scratch, installed_);
    if (!rules) {
        add({t.id, audit::TaskStatus::unsandboxed, "its rules cannot be built: " + rules.error().message, {}});
        return nullptr;
    }
    auto run = std::unique_ptr<TaskRun>(new TaskRun{i, std::move(rules).value(), RecordingLauncher(*recorder_), {}});
    run->directories = OutputDirectories::create(session_.workspace().root(), run->rules.output_directories());
    return run;
}

void SandboxAudit::finish(std::unique_ptr<TaskRun> run, bool interrupted, const std::string& failed_to_run)
{
    const workspace::Task& t = session_.tasks().tasks()[run->task];
    run->directories.remove_empty();
    if (!failed_to_run.empty())
        add({t.id, audit::TaskStatus::not_audited, "it could not run: " + failed_to_run, {}});
    else if (interrupted)
        add({t.id, audit::TaskStatus::not_audited, "the run was interrupted before it finished", {}});
    else
        add(audit::audit_task(t.id, run->launcher.recording(), run->rules, session_.workspace()));
}

void SandboxAudit::restored(std::size_t i)
{
    add({session_.tasks().tasks()[i].id, audit::TaskStatus::restored, {}, {}});
}

audit::RunAudit SandboxAudit::result()
{
    std::lock_guard lock(mutex_);
    audit::RunAudit out = audit_;
    out.finish();
    return out;
}

}  // namespace qk::run
