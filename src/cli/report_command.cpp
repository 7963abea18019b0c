#include "report_command.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "qk/report/report_merge.hpp"
#include "qk/report/report_page.hpp"
#include "qk/report/report_reader.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"

namespace qk::cli {
namespace {

// The reports read and, when there are several, merged; the conflicts said on stderr.
audit::RunAudit merged(const std::vector<std::string>& inputs)
{
    std::vector<report::NamedReport> reports;
    for (const std::string& path : inputs)
        reports.push_back({path, or_fatal(report::load_sandbox_report(path))});
    audit::RunAudit out = or_fatal(report::merge_reports(std::move(reports)));
    for (const auto& [id, records] : out.conflicts) {
        std::string seen;
        for (const audit::TaskAudit& t : records)
            seen += fmt::format("{}{} on shard {} ({})", seen.empty() ? "" : ", ", t.hash.empty() ? "no hash" : t.hash,
                                t.provenance.shard.value_or("(none)"), t.provenance.host);
        std::fprintf(stderr, "qk report: %s has different key hashes on different shards: %s; listed under "
                             "\"conflicts\", not counted in the summary\n",
                     id.c_str(), seen.c_str());
    }
    return out;
}

void write_out(const std::string& path, const std::string& bytes)
{
    if (path.empty() || path == "-") {
        or_fatal(write_all(STDOUT_FILENO, bytes));
        return;
    }
    if (auto written = write_file_atomically(path, bytes); !written)
        throw FatalError(fmt::format("cannot write {}: {}", path, written.error().message), 1);
}

}  // namespace

int run_report_merge(const ReportOptions& options)
{
    write_out(options.output, report::sandbox_report_json(merged(options.inputs)));
    return 0;
}

int run_report_html(const ReportOptions& options)
{
    write_out(options.output, report::report_page(merged(options.inputs)));
    return 0;
}

}  // namespace qk::cli
