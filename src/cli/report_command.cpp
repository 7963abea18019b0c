#include "report_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "qk/report/report_merge.hpp"
#include "qk/report/report_page.hpp"
#include "qk/report/report_reader.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"

namespace qk::cli {
namespace {

// Every report read, on every core: parsing is most of a large merge, and each report is its own.
std::vector<report::AnyReport> read_all(const std::vector<std::string>& inputs)
{
    std::vector<std::optional<Result<report::AnyReport>>> read(inputs.size());
    std::atomic<std::size_t> next{0};
    auto reader = [&] {
        for (std::size_t i; (i = next++) < inputs.size();)
            read[i] = report::load_report(inputs[i]);
    };
    const unsigned threads = std::clamp<unsigned>(std::thread::hardware_concurrency(), 1, 8);
    std::vector<std::jthread> pool;
    for (unsigned t = 1; t < std::min<std::size_t>(threads, inputs.size()); ++t)
        pool.emplace_back(reader);
    reader();
    pool.clear();  // joined
    std::vector<report::AnyReport> out;
    out.reserve(inputs.size());  // a report is large: never copied as the vector grows
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        out.push_back(or_fatal(std::move(*read[i])));
        const bool sandbox = out.back().sandbox.has_value(), first = out.front().sandbox.has_value();
        if (sandbox != first)
            throw FatalError(fmt::format("{} is a {} and {} a {}: merge one kind of report at a time", inputs[0],
                                         first ? "--sandbox-report" : "--report", inputs[i],
                                         sandbox ? "--sandbox-report" : "--report"));
    }
    return out;
}

const audit::Provenance& provenance_of(const audit::TaskAudit& t) { return t.provenance; }
const audit::Provenance& provenance_of(const report::TaskRun& t)
{
    static const audit::Provenance none;
    return t.provenance ? *t.provenance : none;
}

// Each task the shards disagree on, on stderr: the merge goes on, with the task under "conflicts".
template <class Record>
void say_conflicts(const std::map<std::string, std::vector<Record>>& conflicts)
{
    for (const auto& [id, records] : conflicts) {
        std::string seen;
        for (const Record& t : records)
            seen += fmt::format("{}{} on shard {} ({})", seen.empty() ? "" : ", ", t.hash.empty() ? "no hash" : t.hash,
                                provenance_of(t).shard.value_or("(none)"), provenance_of(t).host);
        std::fprintf(stderr, "qk report: %s has different key hashes on different shards: %s; listed under "
                             "\"conflicts\", not counted in the summary\n",
                     printable(id).c_str(), printable(seen).c_str());
    }
}

// The sandbox reports given, merged; a --report is refused.
audit::RunAudit merged_sandbox(const std::vector<std::string>& inputs, std::vector<report::AnyReport> all)
{
    std::vector<report::NamedReport> reports;
    reports.reserve(all.size());
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (!all[i].sandbox)
            throw FatalError(fmt::format("{} is a --report (the run report): qk report html shows --sandbox-report "
                                         "files",
                                         inputs[i]));
        reports.push_back({inputs[i], std::move(*all[i].sandbox)});
    }
    audit::RunAudit out = or_fatal(report::merge_reports(std::move(reports)));
    say_conflicts(out.conflicts);
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

void reexec_with_huge_pages(char** argv)
{
    constexpr const char* kMarker = "QK_REPORT_HUGE_PAGES";
    if (std::getenv(kMarker))
        return;
    const char* old = std::getenv("GLIBC_TUNABLES");
    const std::string kept = old ? old : "";
    std::string tunables = kept.empty() ? "glibc.malloc.hugetlb=1" : kept + ":glibc.malloc.hugetlb=1";
    ::setenv("GLIBC_TUNABLES", tunables.c_str(), 1);
    ::setenv(kMarker, "1", 1);
    ::execv("/proc/self/exe", argv);
    // No exec (no /proc): go on as started.
    if (old)
        ::setenv("GLIBC_TUNABLES", kept.c_str(), 1);
    else
        ::unsetenv("GLIBC_TUNABLES");
}

int run_report_merge(const ReportOptions& options)
{
    std::vector<report::AnyReport> all = read_all(options.inputs);
    if (all.front().sandbox) {
        write_out(options.output, report::sandbox_report_json(merged_sandbox(options.inputs, std::move(all))));
        return 0;
    }
    std::vector<report::NamedRunReport> reports;
    reports.reserve(all.size());
    for (std::size_t i = 0; i < all.size(); ++i)
        reports.push_back({options.inputs[i], std::move(*all[i].run)});
    report::RunReport out = or_fatal(report::merge_run_reports(std::move(reports)));
    say_conflicts(out.conflicts);
    write_out(options.output, report::run_report_json(out));
    return 0;
}

int run_report_html(const ReportOptions& options)
{
    write_out(options.output, report::report_page(merged_sandbox(options.inputs, read_all(options.inputs))));
    return 0;
}

}  // namespace qk::cli
