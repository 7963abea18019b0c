// The --sandbox-report JSON (schemas/sandbox-report.schema.json): the audit as dashboards read it, a
// contract whose field names never change.
#pragma once

#include <string>

#include "qk/audit/findings.hpp"
#include "qk/util/json_writer.hpp"

namespace qk::report {

// The --sandbox-report document (schemaVersion 1), ending in '\n'.
std::string sandbox_report_json(const audit::RunAudit& audit);

// A task's findings as an object of the kinds it has, each a sorted array ({} for none): the report's
// "findings", and the run report's "audit".
void findings_object(JsonWriter& w, const audit::TaskFindings& findings);

// One task's object in "tasks", on one line: what a merge compares records by.
std::string task_json(const audit::TaskAudit& task);

// A task's "provenance" and a report's "run", as both reports write them.
void provenance_object(JsonWriter& w, const audit::Provenance& provenance);
void run_object(JsonWriter& w, const audit::RunIdentity& run);

}  // namespace qk::report
