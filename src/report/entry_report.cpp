// One task's sandbox report, as a cache entry carries it (qk/report/entry_report.hpp): the report's own
// writer and reader, so an entry's record is what a dashboard or `qk report merge` reads anyway.
#include "qk/report/entry_report.hpp"

#include <fmt/format.h>

#include "qk/report/report_reader.hpp"
#include "qk/report/sandbox_report.hpp"

namespace qk::report {

std::string entry_report_json(const audit::TaskAudit& task, const audit::RunAudit& run)
{
    audit::RunAudit one;
    one.mode = run.mode;
    one.recorder = task.provenance.recorder ? task.provenance.recorder : run.recorder;
    one.landlock_abi = run.landlock_abi;
    one.landlock_only = run.landlock_only;
    one.run = run.run;
    one.tasks.push_back(task);
    one.finish();
    return sandbox_report_json(one, 0);
}

Result<audit::TaskAudit> read_entry_report(std::string_view json, const std::string& name)
{
    QK_TRY(report, read_sandbox_report(json, name));
    if (report->tasks.size() != 1 || !report->conflicts.empty())
        return error(fmt::format("{}: a cache entry's sandbox report holds one task, this one {}", name,
                                 report->tasks.size()));
    return std::move(report->tasks.front());
}

}  // namespace qk::report
