// qk report check (report_check.hpp): the report's tasks with findings, planned in today's workspace, each
// asked again of the rules the audit and enforce build (sandbox::task_rules, audit::rejudge).
#include "report_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "qk/audit/finding_kinds.hpp"
#include "qk/audit/rejudge.hpp"
#include "qk/key/session.hpp"
#include "qk/report/report_reader.hpp"
#include "qk/report/sandbox_report.hpp"
#include "qk/report/sandbox_summary.hpp"
#include "qk/run/scratch.hpp"
#include "qk/sandbox/task_rules.hpp"
#include "qk/util/io.hpp"
#include "qk/util/json_writer.hpp"
#include <fmt/ranges.h>
#include "qk/util/printable.hpp"
#include "qk/util/result.hpp"
#include "qk/workspace/task_address.hpp"

namespace qk::cli {

namespace {

struct Checked {
    std::string id;
    std::string gone;  // why it is not in today's workspace; empty when it is
    audit::Rejudged result;
    const audit::TaskAudit* found = nullptr;  // as the report holds it
};

// What the task went beyond with, less what is not going beyond (temporary files, replaced reads).
bool has_findings(const audit::TaskAudit& t)
{
    if (t.status != audit::TaskStatus::audited && t.status != audit::TaskStatus::enforced)
        return false;
    // The machine's own network is listed, never judged: nothing to ask again.
    return !t.findings.empty_but({&audit::TaskFindings::temporary_files, &audit::TaskFindings::replaced_reads,
                                  &audit::TaskFindings::loopback_network});
}

struct Wanted {
    std::string id;
    const audit::TaskAudit* task = nullptr;
    workspace::TaskAddress address;
};

// The tasks of one configuration, planned together in `s` (a session plans once).
Status check_group(key::Session& s, const std::vector<Wanted>& group, const std::string& configuration,
                   std::vector<Checked>& out)
{
    workspace::TaskRequest request;
    request.configuration = configuration;
    std::set<std::string> projects, targets;
    for (const Wanted& w : group) {
        projects.insert(w.address.project);
        targets.insert(w.address.target);
    }
    request.projects.assign(projects.begin(), projects.end());
    request.targets.assign(targets.begin(), targets.end());
    QK_TRY_STATUS(s.plan(request));
    for (std::size_t i = 0; i < s.tasks().tasks().size(); ++i)  // a task's rules name its dependencies' outputs
        if (auto k = s.keys().key(i); !k)
            return k.error();
    const std::string root = s.workspace().root().string();
    // Each task's rules and verdict are its own (as a run builds them for tasks running at once): on
    // every core, each result in its task's place.
    std::vector<std::optional<Result<Checked>>> results(group.size());
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t k; (k = next.fetch_add(1)) < group.size();) {
            const Wanted& w = group[k];
            auto i = s.tasks().index(w.id);
            if (!i) {
                results[k] = Checked{w.id, "not among the tasks its project and target plan today", {}};
                continue;
            }
            const workspace::Task& t = s.tasks().tasks()[*i];
            auto scratch = run::resolve_scratch(s.workspace(), s.workspace().projects()[t.project], *t.target);
            if (!scratch) {
                results[k] = scratch.error();
                continue;
            }
            auto rules = sandbox::task_rules(s, *i, *scratch);
            if (!rules)
                results[k] = rules.error();
            else
                results[k] = Checked{w.id, "", audit::rejudge(w.task->findings, *rules, root), w.task};
        }
    };
    std::vector<std::thread> threads;
    for (unsigned n = std::max(1u, std::thread::hardware_concurrency()); threads.size() + 1 < n;)
        threads.emplace_back(work);
    work();
    for (std::thread& th : threads)
        th.join();
    for (auto& r : results) {
        if (!*r)
            return r->error();
        out.push_back(std::move(**r));
    }
    return {};
}

// With `processes`, each path is followed by the process behind its access, as the report names it.
void kinds_text(std::string& text, const char* heading, const audit::TaskFindings& f,
                const std::map<std::string, std::vector<std::string>>* processes)
{
    if (f.empty())
        return;
    text += fmt::format("    {}:\n", heading);
    for (const audit::FindingKind& k : audit::finding_kinds()) {
        std::vector<std::string> paths;
        if (k.list)
            paths = f.*k.list;
        else
            for (const auto& [project, reads] : f.dependency_reads)
                paths.insert(paths.end(), reads.begin(), reads.end());
        if (k.also)
            paths.insert(paths.end(), (f.*k.also).begin(), (f.*k.also).end());
        for (const std::string& p : paths) {
            text += fmt::format("      {}: {}\n", k.name, printable(p));
            if (!processes)
                continue;
            if (auto it = processes->find(p); it != processes->end())
                text += fmt::format("        {}\n", report::process_chain_text(it->second));
        }
    }
}

std::string as_text(const std::vector<Checked>& checked, std::size_t unexpected, const ReportCheckOptions& options)
{
    const std::string& report = options.report;
    std::string text = unexpected == 0
                           ? fmt::format("qk report check: every task of {} keeps to today's declarations ({} "
                                         "with findings re-judged)\n",
                                         printable(report), checked.size())
                           : fmt::format("qk report check: {} of {} tasks with findings in {} still go beyond "
                                         "today's declarations\n",
                                         unexpected, checked.size(), printable(report));
    for (const Checked& c : checked) {
        if (!c.gone.empty()) {
            text += fmt::format("  {}: not re-judged: {}\n", printable(c.id), printable(c.gone));
            continue;
        }
        const auto* processes = options.verbose && c.found ? &c.found->findings.processes : nullptr;
        if (c.result.ok()) {
            text += fmt::format("  {}: ok\n", printable(c.id));
            kinds_text(text, "allowed, not counted (enforce lets them through, as the audit counts)", c.result.allowed,
                       processes);
            continue;
        }
        text += fmt::format("  {}\n", printable(c.id));
        kinds_text(text, "still unexpected", c.result.still, processes);
        kinds_text(text, "now covered", c.result.covered, nullptr);
        kinds_text(text, "allowed, not counted (enforce lets them through, as the audit counts)", c.result.allowed,
                   nullptr);
        if (!c.result.declared_unkeyed.empty())
            text += fmt::format("    declared as inputs, but the key holds no such file (git-ignored: another task's "
                                "output?): {}; a file only another task makes is a dependency: its task in "
                                "dependsOn, not an input\n",
                                printable(fmt::format("{}", fmt::join(c.result.declared_unkeyed, ", "))));
        if (!c.result.not_rejudged.empty())
            text += fmt::format("    kept as found (a report names them, a run re-judges them): {}\n",
                                fmt::join(c.result.not_rejudged, ", "));
    }
    return text;
}

std::string as_json(const std::vector<Checked>& checked, std::size_t unexpected)
{
    JsonWriter w;
    w.begin_object().key("ok").value(unexpected == 0).key("tasks").begin_object();
    for (const Checked& c : checked) {
        w.key(c.id).begin_object().key("ok").value(c.gone.empty() && c.result.ok());
        if (!c.gone.empty()) {
            w.key("notRejudged").value(c.gone).end_object();
            continue;
        }
        report::findings_object(w.key("stillUnexpected"), c.result.still);
        report::findings_object(w.key("nowCovered"), c.result.covered);
        if (!c.result.allowed.empty())
            report::findings_object(w.key("allowed"), c.result.allowed);
        if (!c.result.not_rejudged.empty())
            w.key("keptAsFound").strings(c.result.not_rejudged);
        w.end_object();
    }
    w.end_object().end_object();
    return w.str() + "\n";
}

}  // namespace

int run_report_check(const ReportCheckOptions& options)
{
    audit::RunAudit found = or_fatal(report::load_sandbox_report(options.report));
    std::unique_ptr<key::Session> first = or_fatal(key::Session::open(options.directory));
    // Each task read against today's workspace (target names hold colons), then grouped by configuration:
    // one plan each, as a run plans its tasks with one.
    std::vector<Checked> checked;
    std::map<std::string, std::vector<Wanted>> groups;
    for (const audit::TaskAudit& t : found.tasks) {
        if (!has_findings(t))
            continue;
        auto address = workspace::parse_task_address(t.task, first->workspace(), "");
        const workspace::Project* project = address ? first->workspace().find_project(address->project) : nullptr;
        if (!address)  // its message lists every project: too much for one line of thousands
            checked.push_back({t.task, "its project is not in today's workspace", {}});
        else if (!project || !project->find_target(address->target))
            checked.push_back({t.task, fmt::format("project {} has no target {} today", address->project,
                                                   address->target),
                               {}});
        else
            groups[address->configuration].push_back({t.task, &t, std::move(*address)});
    }
    for (auto& [configuration, group] : groups) {
        std::unique_ptr<key::Session> s = first ? std::move(first) : or_fatal(key::Session::open(options.directory));
        or_fatal(check_group(*s, group, configuration, checked));
        (void)s->files().save_hash_cache();  // the next check reads the hashes; one not written costs time only
    }
    std::sort(checked.begin(), checked.end(), [](const Checked& a, const Checked& b) { return a.id < b.id; });
    std::size_t unexpected = 0;
    for (const Checked& c : checked)
        unexpected += !c.gone.empty() || !c.result.ok();
    std::string out = options.json ? as_json(checked, unexpected) : as_text(checked, unexpected, options);
    (void)write_all(STDOUT_FILENO, out);  // a closed stdout changes nothing of the verdict
    return unexpected == 0 ? 0 : 1;
}

}  // namespace qk::cli
