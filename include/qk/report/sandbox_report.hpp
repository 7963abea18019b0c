// The --sandbox-report JSON (schemas/sandbox-report.schema.json): the audit as dashboards read it, a
// contract whose field names never change.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "qk/audit/finding_kinds.hpp"
#include "qk/audit/findings.hpp"
#include "qk/util/json_writer.hpp"

namespace qk::report {

// The --sandbox-report document (schemaVersion 1), ending in '\n'; indented by `indent` spaces, or on
// one line with 0 (the report page embeds it so: a third smaller for the browser to read).
std::string sandbox_report_json(const audit::RunAudit& audit, int indent = 2);

// A task's findings as an object of the kinds it has (audit::finding_kinds(), in its order), each a sorted
// array ({} for none): the report's "findings", and the run report's "audit".
void findings_object(JsonWriter& w, const audit::TaskFindings& findings);

// One task's object in "tasks", on one line: what a merge compares records by.
std::string task_json(const audit::TaskAudit& task);

// "tasks" by id, then "conflicts" when there are any, each record written by `fields`: as both reports
// write them.
template <class T, class Fields>
void tasks_object(JsonWriter& w, const std::vector<T>& tasks, const std::map<std::string, std::vector<T>>& conflicts,
                  Fields fields)
{
    w.key("tasks").begin_object();
    for (const T& t : tasks)
        fields(w.key(t.task), t);
    w.end_object();
    if (conflicts.empty())
        return;
    w.key("conflicts").begin_object();
    for (const auto& [id, records] : conflicts) {
        w.key(id).begin_array();
        for (const T& t : records)
            fields(w, t);
        w.end_array();
    }
    w.end_object();
}

// A task's "provenance" and a report's "run", as both reports write them.
void provenance_object(JsonWriter& w, const audit::Provenance& provenance);
void run_object(JsonWriter& w, const audit::RunIdentity& run);

}  // namespace qk::report
