// The --report document: one object per task, keyed by id in the run's order.
#include "qk/report/run_report.hpp"

#include <map>
#include <utility>

#include "qk/report/sandbox_report.hpp"
#include "qk/util/json_writer.hpp"

namespace qk::report {
namespace {

constexpr std::pair<RunStatus, std::string_view> kRunStatusNames[] = {
    {RunStatus::succeeded, "succeeded"}, {RunStatus::failed, "failed"},  {RunStatus::skipped, "skipped"},
    {RunStatus::cancelled, "cancelled"}, {RunStatus::not_run, "notRun"},
};

constexpr std::pair<ResultSource, std::string_view> kResultSourceNames[] = {
    {ResultSource::none, ""},
    {ResultSource::ran, "ran"},
    {ResultSource::restored, "restored"},
    {ResultSource::restored_in_place, "restoredInPlace"},
    {ResultSource::restored_remote, "restoredRemote"},
};

// A value's name in one of the tables above (each names every enumerator).
template <typename E, std::size_t N>
std::string_view name_in(const std::pair<E, std::string_view> (&table)[N], E value)
{
    for (const auto& [v, name] : table)
        if (v == value)
            return name;
    return table[0].second;
}

template <typename E, std::size_t N>
std::optional<E> value_in(const std::pair<E, std::string_view> (&table)[N], std::string_view name)
{
    for (const auto& [v, n] : table)
        if (n == name)
            return v;
    return std::nullopt;
}

void task_fields(JsonWriter& w, const TaskRun& t)
{
    w.begin_object();
    w.key("status").value(run_status_name(t.status));
    if (!t.hash.empty())
        w.key("hash").value(t.hash);
    if (t.source != ResultSource::none)
        w.key("source").value(result_source_name(t.source));
    if (!t.ran_because.empty())
        w.key("ranBecause").value(t.ran_because);
    w.key("durationMs").value(t.duration_ms);
    provenance_object(w.key("provenance"), t.provenance ? *t.provenance : audit::Provenance{});
    if (t.audit)
        findings_object(w.key("audit"), *t.audit);
    w.end_object();
}

}  // namespace

std::string_view run_status_name(RunStatus status) { return name_in(kRunStatusNames, status); }

std::optional<RunStatus> parse_run_status(std::string_view name) { return value_in(kRunStatusNames, name); }

std::string_view result_source_name(ResultSource source) { return name_in(kResultSourceNames, source); }

std::optional<ResultSource> parse_result_source(std::string_view name)
{
    if (name.empty())
        return std::nullopt;  // "" is only ever written as no field at all
    return value_in(kResultSourceNames, name);
}

std::string run_status_names()
{
    std::string out;
    for (const auto& [s, name] : kRunStatusNames)
        out.append(out.empty() ? "" : ", ").append(name);
    return out;
}

std::string task_run_json(const TaskRun& t)
{
    JsonWriter w(0);
    task_fields(w, t);
    return w.str();
}

std::string run_report_json(const RunReport& report)
{
    JsonWriter w(2);
    w.reserve(512 + report.tasks.size() * 512);
    w.begin_object();
    w.key("schemaVersion").value(1);
    run_object(w.key("run"), report.run);
    std::size_t counts[4] = {};  // succeeded, failed, restored, ran
    for (const TaskRun& t : report.tasks) {
        counts[0] += t.status == RunStatus::succeeded;
        counts[1] += t.status == RunStatus::failed;
        counts[2] += t.source == ResultSource::restored || t.source == ResultSource::restored_in_place ||
                     t.source == ResultSource::restored_remote;
        counts[3] += t.source == ResultSource::ran;
    }
    w.key("summary").begin_object();
    w.key("tasks").value(static_cast<std::int64_t>(report.tasks.size()));
    w.key("succeeded").value(static_cast<std::int64_t>(counts[0]));
    w.key("failed").value(static_cast<std::int64_t>(counts[1]));
    w.key("restored").value(static_cast<std::int64_t>(counts[2]));
    w.key("ran").value(static_cast<std::int64_t>(counts[3]));
    if (!report.conflicts.empty())
        w.key("conflicts").value(static_cast<std::int64_t>(report.conflicts.size()));
    w.end_object();
    tasks_object(w, report.tasks, report.conflicts, task_fields);
    w.end_object();
    return std::move(w).take_line();
}

std::string run_report_json(const std::vector<TaskRun>& tasks, const audit::RunAudit* audit,
                            const audit::RunIdentity& run)
{
    std::map<std::string, const audit::TaskAudit*> audited;
    if (audit)
        for (const audit::TaskAudit& t : audit->tasks)
            if (t.status == audit::TaskStatus::audited)
                audited.emplace(t.task, &t);
    RunReport report{run, tasks, {}};
    for (TaskRun& t : report.tasks)
        if (auto it = audited.find(t.task); it != audited.end())
            t.audit = std::make_shared<const audit::TaskFindings>(it->second->findings);
    return run_report_json(report);
}

}  // namespace qk::report
