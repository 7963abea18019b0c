// The --sandbox-report document (schemas/sandbox-report.schema.json): every task's status and, for
// those audited, every finding by kind, including what the summary counts once rather than per task.
#include "qk/util/json_writer.hpp"
#include "qk/report/sandbox_report.hpp"

#include "qk/audit/suggestions.hpp"

#include <algorithm>
#include <iterator>

namespace qk::report {

using audit::RunAudit;
using audit::TaskAudit;
using audit::TaskFindings;
using audit::TaskStatus;

namespace {

std::int64_t integer(std::size_t n) { return static_cast<std::int64_t>(n); }

void kind(JsonWriter& w, const char* name, const std::vector<std::string>& paths)
{
    if (!paths.empty())
        w.key(name).strings(paths);
}

}  // namespace

// Only the kinds the task has: a reader tells a task that kept to its declarations by "{}".
void findings_object(JsonWriter& w, const TaskFindings& f)
{
    w.begin_object();
    kind(w, "readsOutsideInputs", f.reads_outside_inputs);
    kind(w, "tsconfigReads", f.tsconfig_reads);
    // .git writes included: the task made them, though enforce allows them.
    std::vector<std::string> writes;
    std::merge(f.stray_writes.begin(), f.stray_writes.end(), f.git_writes.begin(), f.git_writes.end(),
               std::back_inserter(writes));
    kind(w, "strayWrites", writes);
    kind(w, "temporaryFiles", f.temporary_files);
    kind(w, "unkeyedReads", f.unkeyed_reads);
    kind(w, "manifestReads", f.manifest_reads);
    kind(w, "toolchainReads", f.toolchain_reads);
    bool any_project = false;
    for (const auto& [project, paths] : f.dependency_reads) {
        if (paths.empty())
            continue;
        if (!any_project)
            w.key("dependencyReads").begin_object();
        any_project = true;
        w.key(project).strings(paths);
    }
    if (any_project)
        w.end_object();
    kind(w, "unkeyedPackages", f.unkeyed_packages);
    kind(w, "hoistedPackages", f.hoisted_packages);
    kind(w, "refusedReads", f.refused_reads);
    kind(w, "refusedWrites", f.refused_writes);
    kind(w, "discardedWrites", f.discarded_writes);
    w.end_object();
}

namespace {

void findings(JsonWriter& w, const TaskFindings& f)
{
    findings_object(w.key("findings"), f);
}

void task(JsonWriter& w, const TaskAudit& t)
{
    w.key(t.task).begin_object();
    w.key("status").value(audit::status_name(t.status));
    if (!t.reason.empty())
        w.key("reason").value(t.reason);
    // A task that did not run under the sandbox has nothing to report, not "nothing found".
    if (t.status == TaskStatus::audited || t.status == TaskStatus::enforced) {
        findings(w, t.findings);
        auto suggestions = audit::suggest(t);
        if (!suggestions.empty()) {
            w.key("suggestions").begin_array();
            for (const audit::Suggestion& s : suggestions) {
                w.begin_object().key("finding").value(s.finding).key("declare").value(s.declare);
                w.key("values").strings(s.values);
                if (!s.or_ignore.empty())
                    w.key("orIgnoreReads").strings(s.or_ignore);
                w.end_object();
            }
            w.end_array();
        }
    }
    w.end_object();
}

void summary(JsonWriter& w, const RunAudit& audit)
{
    const RunAudit::Counts& c = audit.counts;
    w.key("summary").begin_object();
    w.key("tasks").value(integer(c.tasks));
    w.key("audited").value(integer(c.audited));
    w.key("wentBeyond").value(integer(c.went_beyond));
    w.key("restored").value(integer(c.restored));
    w.key("notAudited").value(integer(c.not_audited));
    w.key("unsandboxed").value(integer(c.unsandboxed));
    w.key("refused").value(integer(c.refused));
    if (audit.mode == "enforce")
        w.key("enforced").value(integer(c.enforced));
    w.end_object();
}

}  // namespace

// Expects a finished audit: finish() sorts the tasks, so their keys come in order, and each list of
// paths, so the arrays are sorted and hold each path once as the schema promises.
std::string sandbox_report_json(const RunAudit& audit)
{
    JsonWriter w(2);
    w.begin_object();
    w.key("schemaVersion").value(1);
    w.key("mode").value(audit.mode);
    if (audit.recorder)
        w.key("recorder").value(*audit.recorder);
    else
        w.key("recorder").null();
    if (!audit.no_recorder.empty())
        w.key("recorderUnavailable").value(audit.no_recorder);
    if (audit.mode == "enforce") {
        if (audit.landlock_abi > 0)
            w.key("landlockAbi").value(audit.landlock_abi);
        if (!audit.landlock_only.empty())
            w.key("landlockOnly").value(audit.landlock_only);
    }
    summary(w, audit);
    w.key("tasks").begin_object();
    for (const auto& t : audit.tasks)
        task(w, t);
    w.end_object();
    w.key("readByMany").begin_array();
    for (const auto& c : audit.read_by_many)
        w.begin_object().key("path").value(c.path).key("tasks").value(integer(c.tasks)).end_object();
    w.end_array();
    w.key("packagesReadByMany").begin_array();
    for (const auto& c : audit.packages_read_by_many)
        w.begin_object().key("package").value(c.path).key("tasks").value(integer(c.tasks)).end_object();
    w.end_array();
    w.end_object();
    return w.str() + "\n";
}

}  // namespace qk::report
