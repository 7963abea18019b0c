// What RunMany writes at the end of a run: the sandbox's summary and --sandbox-report, and --report.
#include "qk/run/run_many.hpp"

#include <unordered_map>

#include <fmt/format.h>

#include "qk/report/run_identity.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"
#include "qk/sandbox/sandbox.hpp"
#include "qk/util/atomic_file.hpp"
#include "qk/util/printable.hpp"
#include "output_display.hpp"

namespace qk::run {

const audit::RunIdentity& RunMany::run_identity()
{
    if (!run_identity_)
        run_identity_ = report::run_identity(session_->workspace().root(), request_.settings.env);
    return *run_identity_;
}

void RunMany::stamp(audit::RunAudit& audit)
{
    audit.run = run_identity();
    const audit::Provenance machine = report::machine_provenance(audit.run, sandbox::machine_landlock_abi());
    std::unordered_map<std::string_view, const report::TaskRun*> runs;
    for (const report::TaskRun& r : runs_)
        runs.emplace(r.task, &r);
    for (audit::TaskAudit& t : audit.tasks) {
        if (auto i = session_->tasks().index(t.task); i && t.project.empty())
            t.project = session_->workspace().projects()[session_->tasks().tasks()[*i].project].name;
        if (t.from_remote_cache)
            continue;  // its record is the machine's that ran it
        if (auto it = runs.find(t.task); it != runs.end())
            t.hash = it->second->hash;
        stamp_task(t, machine);
    }
}

void RunMany::stamp_task(audit::TaskAudit& t, const audit::Provenance& machine)
{
    // What the sandbox knew of the task (its recorder, lost events, overlay) on this machine's.
    audit::Provenance seen = machine;
    seen.recorder = t.provenance.recorder;
    seen.lost_events = t.provenance.lost_events;
    seen.overlay = t.provenance.overlay;
    t.provenance = std::move(seen);
}

bool RunMany::write_run_report()
{
    if (request_.report.empty())
        return true;
    std::optional<audit::RunAudit> audit;
    if (sandbox_ && request_.sandbox != sandbox::SandboxMode::off)
        audit = sandbox_->result();
    const audit::RunIdentity& run = run_identity();
    auto machine = std::make_shared<const audit::Provenance>(report::machine_provenance(run, sandbox::machine_landlock_abi()));
    for (report::TaskRun& r : runs_)
        r.provenance = machine;
    if (audit) {
        std::unordered_map<std::string_view, const audit::TaskAudit*> seen;
        for (const audit::TaskAudit& t : audit->tasks)
            seen.emplace(t.task, &t);
        for (report::TaskRun& r : runs_)
            if (auto it = seen.find(r.task); it != seen.end()) {
                auto own = std::make_shared<audit::Provenance>(*machine);
                own->recorder = it->second->provenance.recorder;
                own->lost_events = it->second->provenance.lost_events;
                own->overlay = it->second->provenance.overlay;
                r.provenance = std::move(own);
            }
    }
    Status written = write_file_atomically(request_.report,
                                           report::run_report_json(runs_, audit ? &*audit : nullptr, run));
    if (written)
        return true;
    fd_sink(request_.output_fd)(
        fmt::format("qk: the run report was not written: {}\n", printable_message(written.error().message)));
    return false;
}

bool RunMany::report_audit()
{
    // --record alone audits nothing.
    if (!sandbox_ || request_.sandbox == sandbox::SandboxMode::off)
        return true;
    audit::RunAudit result = sandbox_->result();
    fd_sink(request_.output_fd)(report::sandbox_summary(result, {.processes = request_.verbose}));
    if (request_.sandbox_report.empty())
        return true;
    stamp(result);
    // Written beside and renamed: a reader never sees half a report, and a failed write keeps the last.
    Status written = write_file_atomically(request_.sandbox_report, report::sandbox_report_json(result));
    if (written)
        return true;
    fd_sink(request_.output_fd)(fmt::format("qk: the sandbox report was not written: {}; the summary above "
                                            "holds the findings\n",
                                            printable_message(written.error().message)));
    return false;
}

}  // namespace qk::run
