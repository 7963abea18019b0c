// The --sandbox-report document (schemas/sandbox-report.schema.json): every task's status and, for
// those audited, every finding by kind, including what the summary counts once rather than per task.
#include "qk/util/json_writer.hpp"
#include "qk/report/sandbox_report.hpp"

#include "qk/audit/suggestions.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <iterator>

namespace qk::report {

using audit::FindingKind;
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
    for (const FindingKind& k : audit::finding_kinds()) {
        if (!k.list) {
            bool any_project = false;
            for (const auto& [project, paths] : f.dependency_reads) {
                if (paths.empty())
                    continue;
                if (!any_project)
                    w.key(k.name).begin_object();
                any_project = true;
                w.key(project).strings(paths);
            }
            if (any_project)
                w.end_object();
        } else if (k.also) {
            // strayWrites with the .git writes: the task made them, though enforce allows them.
            std::vector<std::string> paths;
            std::merge((f.*k.list).begin(), (f.*k.list).end(), (f.*k.also).begin(), (f.*k.also).end(),
                       std::back_inserter(paths));
            kind(w, k.name, paths);
        } else {
            kind(w, k.name, f.*k.list);
        }
    }
    w.end_object();
}

namespace {

void findings(JsonWriter& w, const TaskFindings& f)
{
    findings_object(w.key("findings"), f);
}

void optional_string(JsonWriter& w, const char* name, const std::optional<std::string>& v)
{
    if (v)
        w.key(name).value(*v);
    else
        w.key(name).null();
}

}  // namespace

void provenance_object(JsonWriter& w, const audit::Provenance& p)
{
    w.begin_object();
    optional_string(w, "shard", p.shard);
    w.key("host").value(p.host);
    w.key("kernel").value(p.kernel);
    optional_string(w, "recorder", p.recorder);
    if (p.landlock_abi > 0)
        w.key("landlockAbi").value(p.landlock_abi);
    else
        w.key("landlockAbi").null();
    if (p.overlay)
        w.key("overlay").value(*p.overlay);
    else
        w.key("overlay").null();
    w.key("lostEvents").value(static_cast<std::int64_t>(p.lost_events));
    w.end_object();
}

void run_object(JsonWriter& w, const audit::RunIdentity& run)
{
    w.begin_object();
    w.key("id").value(run.id);
    w.key("idFrom").value(run.id_from);
    optional_string(w, "commit", run.commit);
    w.key("shards").begin_array();
    for (const auto& shard : run.shards)
        if (shard)
            w.value(*shard);
        else
            w.null();
    w.end_array();
    w.end_object();
}

namespace {

// What stands behind the network kinds' entries: each connection as the recorder saw it, as qk-trace's
// JSON gives it, with the entry it is listed under.
void connections(JsonWriter& w, const std::vector<TaskFindings::Connection>& all)
{
    w.key("connections").begin_array();
    for (const TaskFindings::Connection& c : all) {
        w.begin_object().key("entry").value(c.reached).key("address").value(c.address);
        w.key("port").value(static_cast<std::int64_t>(c.port)).key("protocol").value(c.datagram ? "udp" : "tcp");
        if (!c.host.empty())
            w.key("host").value(c.host);
        w.key("count").value(static_cast<std::int64_t>(c.count)).key("reached").value(c.answered);
        w.end_object();
    }
    w.end_array();
}

void task_fields(JsonWriter& w, const TaskAudit& t)
{
    w.begin_object();
    if (!t.project.empty())
        w.key("project").value(t.project);
    w.key("status").value(audit::status_name(t.status));
    if (!t.reason.empty())
        w.key("reason").value(t.reason);
    if (!t.hash.empty())
        w.key("hash").value(t.hash);
    provenance_object(w.key("provenance"), t.provenance);
    if (t.from_remote_cache)
        w.key("fromRemoteCache").value(true);
    // A task that did not run under the sandbox has nothing to report, not "nothing found".
    if (t.status == TaskStatus::audited || t.status == TaskStatus::enforced) {
        findings(w, t.findings);
        if (!t.findings.processes.empty()) {
            w.key("processes").begin_object();
            for (const auto& [path, chain] : t.findings.processes)
                w.key(path).strings(chain);
            w.end_object();
        }
        if (!t.findings.connections.empty())
            connections(w, t.findings.connections);
        if (!t.findings.hoisted_importers.empty()) {
            w.key("hoistedImporters").begin_object();
            for (const auto& [name, found] : t.findings.hoisted_importers) {
                w.key(name).begin_object().key("installed").value(found.installed);
                w.key("importedBy").strings(found.imported_by);
                w.end_object();
            }
            w.end_object();
        }
        std::vector<audit::Suggestion> made;
        const auto& suggestions = t.given_suggestions ? *t.given_suggestions : (made = audit::suggest(t));
        if (!suggestions.empty()) {
            w.key("suggestions").begin_array();
            for (const audit::Suggestion& s : suggestions) {
                w.begin_object().key("finding").value(s.finding).key("declare").value(s.declare);
                w.key("values").strings(s.values);
                if (!s.or_ignore.empty())
                    w.key("orIgnoreReads").strings(s.or_ignore);
                if (!s.prefer_ignore.empty())
                    w.key("preferIgnoreReads").value(s.prefer_ignore);
                if (!s.in_place_of.empty())
                    w.key("inPlaceOf").strings(s.in_place_of);
                w.end_object();
            }
            w.end_array();
        }
    }
    // For a task recorded now, or restored with the counts earlier recorded runs left.
    if (!t.inputs_never_read.empty())
        w.key("inputsNeverRead").strings(t.inputs_never_read);
    w.end_object();
}


}  // namespace

std::string task_json(const TaskAudit& t)
{
    JsonWriter w(0);
    task_fields(w, t);
    return w.str();
}

namespace {

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
    if (!audit.conflicts.empty())
        w.key("conflicts").value(integer(audit.conflicts.size()));
    w.end_object();
}

// What many tasks read, to declare once in nx.json: absent when nothing is, so a report without it reads
// as before.
void shared_suggestions(JsonWriter& w, const RunAudit& audit)
{
    auto shared = audit::suggest_shared(audit);
    if (shared.empty())
        return;
    w.key("sharedSuggestions").begin_array();
    for (const audit::SharedSuggestion& s : shared) {
        w.begin_object().key("namedInput").value(s.named_input);
        w.key("values").strings(s.values);
        if (!s.or_ignore.empty())
            w.key("orIgnoreReads").strings(s.or_ignore);
        if (!s.prefer_ignore.empty())
            w.key("preferIgnoreReads").value(s.prefer_ignore);
        w.key("targets").strings(s.targets);
        w.key("tasks").value(integer(s.tasks));
        w.end_object();
    }
    w.end_array();
}

}  // namespace

// Expects a finished audit: finish() sorts the tasks, so their keys come in order, and each list of
// paths, so the arrays are sorted and hold each path once as the schema promises.
std::string sandbox_report_json(const RunAudit& audit, int indent)
{
    JsonWriter w(indent);
    w.reserve(1024 + audit.tasks.size() * (indent > 0 ? 768 : 512));  // a task's object with its provenance and a few findings
    w.begin_object();
    w.key("schemaVersion").value(1);
    run_object(w.key("run"), audit.run);
    w.key("mode").value(audit.mode);
    if (audit.recorder)
        w.key("recorder").value(*audit.recorder);
    else
        w.key("recorder").null();
    if (!audit.no_recorder.empty())
        w.key("recorderUnavailable").value(audit.no_recorder);
    if (!audit.recorder_fallback.empty())
        w.key("recorderFallback").value(audit.recorder_fallback);
    if (audit.mode == "enforce") {
        if (audit.landlock_abi > 0)
            w.key("landlockAbi").value(audit.landlock_abi);
        if (!audit.landlock_only.empty())
            w.key("landlockOnly").value(audit.landlock_only);
    }
    summary(w, audit);
    tasks_object(w, audit.tasks, audit.conflicts, task_fields);
    w.key("readByMany").begin_array();
    for (const auto& c : audit.read_by_many)
        w.begin_object().key("path").value(c.path).key("tasks").value(integer(c.tasks)).end_object();
    w.end_array();
    w.key("packagesReadByMany").begin_array();
    for (const auto& c : audit.packages_read_by_many)
        w.begin_object().key("package").value(c.path).key("tasks").value(integer(c.tasks)).end_object();
    w.end_array();
    shared_suggestions(w, audit);
    w.end_object();
    return std::move(w).take_line();
}

}  // namespace qk::report
