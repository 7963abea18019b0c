#include "sandbox_audit.hpp"

#include "qk/audit/classify.hpp"
#include "input_use_count.hpp"
#include "recorded_reads.hpp"

namespace qk::sandbox {

class SandboxAudit::Recorded final : public TaskSandbox {
public:
    Recorded(std::size_t task, rules::Rules rules, record::Recorder& recorder, bool for_cache)
        : TaskSandbox(task, std::move(rules)), recording(recorder, {.probes = for_cache})
    {
    }
    record::Launcher& launcher() override { return recording; }
    RecordingLauncher recording;
};

Result<std::unique_ptr<SandboxAudit>> SandboxAudit::open(record::RecorderChoice choice, key::Session& session,
                                                         const RecorderSettings& settings, bool record, bool audit)
{
    std::unique_ptr<SandboxAudit> self(new SandboxAudit(session, record, audit));
    QK_TRY_STATUS(self->open_common(choice, settings, "audit"));
    return self;
}

Sandbox::Start SandboxAudit::start(std::size_t i, const std::vector<std::string>& scratch)
{
    const workspace::Task& t = task(i);
    if (!audit_tasks_) {  // --record alone: only what the cache keys by its recording
        if (!for_cache(i) || !recorder_)
            return {};
        auto rules = rules_of(i, scratch);
        if (!rules) {
            std::lock_guard lock(mutex_);
            read_sets_.emplace(i, error("its rules cannot be built: " + rules.error().message));
            return {};
        }
        return {std::make_unique<Recorded>(i, std::move(rules).value(), *recorder_, true), std::nullopt};
    }
    if (!t.target->sandbox.enabled) {
        add({t.id, audit::TaskStatus::unsandboxed, "\"qk:sandbox\": false on its target", {}});
        return {};
    }
    if (!recorder_) {
        add({t.id, audit::TaskStatus::not_audited, "no recorder works here", {}});
        return {};
    }
    auto rules = rules_of(i, scratch);
    if (!rules) {
        add({t.id, audit::TaskStatus::unsandboxed, "its rules cannot be built: " + rules.error().message, {}});
        if (for_cache(i)) {
            std::lock_guard lock(mutex_);
            read_sets_.emplace(i, error("its rules cannot be built: " + rules.error().message));
        }
        return {};
    }
    auto run = std::make_unique<Recorded>(i, std::move(rules).value(), *recorder_, for_cache(i));
    run->directories =
        OutputDirectories::create(session_.workspace().root(), run->rules.output_directories(), made_directories_);
    return {std::move(run), std::nullopt};
}

Status SandboxAudit::finish(std::unique_ptr<TaskSandbox> run, bool interrupted, const std::string& failed_to_run)
{
    auto& recorded = static_cast<Recorded&>(*run);
    const workspace::Task& t = task(run->task);
    run->directories.remove_empty();
    const record::Recording& recording = recorded.recording.recording();
    const bool whole = failed_to_run.empty() && !interrupted;
    if (for_cache(run->task) && whole) {
        auto set = recorded_reads(recording, run->rules, session_.workspace().root());
        std::lock_guard lock(mutex_);
        read_sets_.emplace(run->task, std::move(set));
    }
    // A count lost (the cache cannot be written) costs a candidate to narrow the key, nothing more.
    std::vector<std::string> never_read;
    if (record_ && whole && !run->command_failed && recording.complete())
        if (auto counted = count_input_use(session_, run->task, recording, run->rules))
            never_read = std::move(*counted);
    if (!audit_tasks_)
        return {};
    audit::TaskAudit seen;
    if (!failed_to_run.empty())
        seen = {t.id, audit::TaskStatus::not_audited, "it could not run: " + failed_to_run, {}};
    else if (interrupted)
        seen = {t.id, audit::TaskStatus::not_audited, "the run was interrupted before it finished", {}};
    else
        seen = audit::audit_task(t.id, recording, run->rules, session_.workspace());
    seen.provenance.recorder = std::string(recorder_->name());
    seen.provenance.lost_events = recording.lost_events();
    seen.inputs_never_read = std::move(never_read);
    add(std::move(seen));
    return {};
}

void SandboxAudit::add_to_restored(std::size_t i, audit::TaskAudit& record)
{
    // Under --record the counts earlier recorded runs kept still say what its key holds in vain, though
    // this run did not record it: on CI, where most tasks are restored, that is where they show.
    if (record_)
        record.inputs_never_read = never_read_so_far(session_, i);
}

std::optional<Result<key::ReadSet>> SandboxAudit::take_read_set(std::size_t i)
{
    std::lock_guard lock(mutex_);
    auto it = read_sets_.find(i);
    if (it == read_sets_.end()) {
        // Not recorded for the cache, or no recorder works (the run goes on as without --record, and
        // notice() said so): stored as without --record.
        return std::nullopt;
    }
    Result<key::ReadSet> out = std::move(it->second);
    read_sets_.erase(it);
    return out;
}

}  // namespace qk::sandbox
