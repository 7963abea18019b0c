// What RunMany writes at the end of a run: the sandbox's summary and --sandbox-report, and --report.
#include "qk/run/run_many.hpp"

#include <fmt/format.h>

#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"
#include "qk/util/atomic_file.hpp"
#include "output_display.hpp"
#include "sandbox.hpp"

namespace qk::run {

bool RunMany::write_run_report()
{
    if (request_.report.empty())
        return true;
    std::optional<audit::RunAudit> audit;
    if (sandbox_ && request_.sandbox == SandboxMode::audit)
        audit = sandbox_->result();
    Status written =
        write_file_atomically(request_.report, report::run_report_json(runs_, audit ? &*audit : nullptr));
    if (written)
        return true;
    fd_sink(request_.output_fd)(fmt::format("qk: the run report was not written: {}\n", written.error().message));
    return false;
}

bool RunMany::report_audit()
{
    // --record alone audits nothing.
    if (!sandbox_ || request_.sandbox == SandboxMode::off)
        return true;
    audit::RunAudit result = sandbox_->result();
    fd_sink(request_.output_fd)(report::sandbox_summary(result));
    if (request_.sandbox_report.empty())
        return true;
    // Written beside and renamed: a reader never sees half a report, and a failed write keeps the last.
    Status written = write_file_atomically(request_.sandbox_report, report::sandbox_report_json(result));
    if (written)
        return true;
    fd_sink(request_.output_fd)(fmt::format("qk: the sandbox report was not written: {}; the summary above "
                                            "holds the findings\n",
                                            written.error().message));
    return false;
}

}  // namespace qk::run
