#include "sandbox_enforce.hpp"

#include <time.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "qk/audit/classify.hpp"
#include "qk/enforce/apply.hpp"
#include "qk/enforce/plan_grant.hpp"
#include "qk/enforce/probe.hpp"
#include "qk/enforce/run_mirror.hpp"
#include "qk/key/cache.hpp"
#include "qk/key/outputs.hpp"
#include "qk/util/link_target.hpp"
#include "qk/util/path_within.hpp"
#include "qk/workspace/glob.hpp"
#include "qk/enforce/upper_layer.hpp"
#include "qk/sandbox/sandbox_exec_path.hpp"
#include "enforce_launcher.hpp"
#include "recording_launcher.hpp"

namespace qk::sandbox {


namespace {

constexpr const char* kUnsandboxHint = "set \"qk:sandbox\": false on its target to run it unsandboxed";

// Its declared outputs that name one path (no pattern), and of them those that name one file (with an
// extension, not an output directory the rules know): held by Landlock alone a missing file output cannot
// be created, nor an output directory removed, and the summary says what to do instead.
void declared_output_paths(key::Session& session, const workspace::Task& t, const rules::Rules& rules,
                           audit::TaskAudit& audit)
{
    auto outputs = key::resolve_outputs(session.workspace().projects()[t.project], *t.target, t.configuration);
    if (!outputs)
        return;
    const std::vector<std::string> dirs = rules.directory_outputs();
    for (const std::string& p : outputs->paths) {
        auto glob = workspace::Glob::compile(p);
        if (!glob || !glob->names_path())
            continue;
        audit.output_paths.push_back(p);
        if (std::find(dirs.begin(), dirs.end(), p) != dirs.end())
            continue;
        std::string_view name = std::string_view(p).substr(p.rfind('/') + 1);
        if (name.find('.') != std::string_view::npos && name.front() != '.')
            audit.file_outputs.push_back(p);
    }
}

}  // namespace

class SandboxEnforce::Enforced final : public TaskSandbox {
public:
    Enforced(std::size_t task, rules::Rules rules, record::Recorder* recorder, const enforce::SandboxDir& dir,
             enforce::SandboxPlan plan, const std::string& helper, bool private_tmp, HelperServer* server)
        : TaskSandbox(task, std::move(rules))
    {
        // Refusals only: opens and execs refused, and over a read mask the looks refused too (access(R_OK)
        // of a stand-in says EACCES: a tool that checks before it opens is refused there). Lookups that
        // found nothing matter only where the mask hides what the run's other tasks may write meanwhile.
        if (recorder)
            recording.emplace(*recorder, RecordingOptions{.only_denials = true,
                                                                    .probes = plan.read_mask && !plan.hidden.empty(),
                                                                    .lookups = plan.read_mask,
                                                                    .wrapped = true});
        record::Launcher& inner = recording ? static_cast<record::Launcher&>(*recording) : plain;
        enforced.emplace(inner, dir, std::move(plan), helper, private_tmp, server);
        // Before its commands build their Landlock rules; coarse, the clock the kernel stamps ctime by.
        ::clock_gettime(CLOCK_REALTIME_COARSE, &started);
    }
    record::Launcher& launcher() override { return *enforced; }

    std::optional<RecordingLauncher> recording;
    record::ProcessLauncher plain;
    std::optional<EnforceLauncher> enforced;
    struct timespec started {};
    // Outputs qk made as directories before the task (Landlock alone, or no read mask): a tool that
    // renames or copies into one then gives another tree than without the sandbox.
    std::vector<std::string> outputs_qk_made;
    std::string network_token;  // its list's name at the run's proxy, when it declares one
};

std::optional<std::string> SandboxEnforce::note_outputs_made(std::size_t i, const std::vector<std::string>& made)
{
    const std::string& root = session_.workspace().root();
    std::vector<std::string> left;
    for (const std::string& d : made) {
        std::error_code ec;
        if (std::filesystem::is_directory(root + "/" + d, ec))  // removed again when the task left it empty
            left.push_back(d);
    }
    if (left.empty())
        return std::nullopt;
    std::string said = fmt::format("qk made its output {} as a directory before it ran ({}), which changes what a "
                                   "tool that renames or copies into it leaves, so its result is not cached; over "
                                   "an overlay with a read mask qk makes none",
                                   fmt::join(left, ", "),
                                   overlay_ ? "its reads held by Landlock's list" : "held by Landlock alone");
    std::lock_guard lock(mutex_);
    made_outputs_[i] = said;
    return said;
}

std::optional<std::string> SandboxEnforce::changed(std::size_t i)
{
    std::lock_guard lock(mutex_);
    if (auto it = made_outputs_.find(i); it != made_outputs_.end())
        return it->second;
    return std::nullopt;
}

Sandbox::Start SandboxEnforce::start(std::size_t i, const std::vector<std::string>& scratch)
{
    const workspace::Task& t = task(i);
    if (!t.target->sandbox.enabled) {
        add({t.id, audit::TaskStatus::unsandboxed, "\"qk:sandbox\": false on its target", {}});
        return {};
    }
    auto rules = rules_of(i, scratch);
    if (!rules) {
        std::string why = "its rules cannot be built: " + rules.error().message;
        add({t.id, audit::TaskStatus::refused, fmt::format("{}; {}", why, kUnsandboxHint), {}});
        return {nullptr, why};
    }
    const std::string& root = session_.workspace().root();
    // The directories outputs lie in are made as the task starts, as the audit makes them (the spec). An
    // output itself is made only where Landlock must allow it by its inode: held by Landlock alone, or
    // over an overlay without a read mask, where its grants are Landlock's list. Over a read mask nothing
    // is: a task's `mv out.tmp out` or `cp -r src out` gives the tree it gives without the sandbox. Over
    // an overlay they are made in the command's upper layer, so a run killed midway leaves no trace.
    std::vector<std::string> dirs = rules->output_directories();
    const bool outputs_made = !(overlay_ && read_mask_);
    std::vector<std::string> directory_outputs = outputs_made ? rules->directory_outputs() : std::vector<std::string>{};
    dirs.insert(dirs.end(), directory_outputs.begin(), directory_outputs.end());
    if (!overlay_) {
        // Landlock alone cannot let a task make a warm path that is not there (the spec lets it write
        // them): made too, and removed if left empty. State a tool keeps, not an output, so not noted.
        std::vector<std::string> warm = rules->directory_warm_paths();
        dirs.insert(dirs.end(), warm.begin(), warm.end());
        std::vector<std::string> caches = rules->tool_cache_directories();
        dirs.insert(dirs.end(), caches.begin(), caches.end());
    }
    std::sort(dirs.begin(), dirs.end());  // parents first
    dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
    OutputDirectories made = overlay_ ? OutputDirectories::missing(root, dirs)
                                       : OutputDirectories::create(root, dirs, made_directories_);
    std::vector<std::string> outputs_qk_made;
    for (const std::string& d : directory_outputs)
        if (std::find(made.created().begin(), made.created().end(), d) != made.created().end())
            outputs_qk_made.push_back(d);

    enforce::SandboxPlan plan;
    plan.root = root;
    plan.overlay = overlay_;
    plan.user_namespace = user_namespace_;
    using Access = enforce::SandboxPlan::Grant::Access;
    if (overlay_) {
        plan.binds = rules->pass_through();
        plan.make_dirs = made.created();
        for (const std::string& d : outputs_qk_made)
            plan.grants.push_back({d, Access::read_write});
    }
    for (const rules::Grant& g : rules->grants())
        plan.grants.push_back(enforce::plan_grant(g));
    // qk's machinery, kept from the task whatever it may touch: the directories holding every run's
    // sandboxes, and the cache (entries, read sets, file hashes) in qk's state.
    plan.cover = covers_;
    plan.read_only = {key::LocalCache::kRelativeDirectory};
    if (overlay_ && read_mask_) {
        // What the task may read (its grants) and what is bound through stay in its view; the rest is
        // masked by the helper, and so is what the run's other tasks may write there meanwhile.
        plan.read_mask = true;
        if (mirror_)
            plan.mirror = mirror_->layer_path();
        for (const std::string& p : run_outputs_)
            if (!rules->read(root + "/" + p).allowed())
                plan.hidden.push_back(p);
    }
    std::string token;
    if (auto net = plan_network(t, plan, token); !net) {
        add({t.id, audit::TaskStatus::refused, net.error().message, {}});
        return {nullptr, net.error().message};
    }
    auto run = std::make_unique<Enforced>(i, std::move(rules).value(), recorder_.get(), *dir_, std::move(plan),
                                          helper_, private_tmp_, server_.get());
    run->network_token = std::move(token);
    run->directories = std::move(made);
    run->outputs_qk_made = std::move(outputs_qk_made);
    return {std::move(run), std::nullopt};
}

Status SandboxEnforce::finish(std::unique_ptr<TaskSandbox> task_run, bool interrupted, const std::string& failed_to_run)
{
    auto& run = static_cast<Enforced&>(*task_run);
    const workspace::Task& t = task(run.task);
    const std::string& root = session_.workspace().root();
    Status kept;
    audit::TaskAudit audit{t.id, audit::TaskStatus::enforced, {}, {}};
    audit.failed = run.command_failed;
    audit.project_root = session_.workspace().projects()[t.project].root;
    declared_output_paths(session_, t, run.rules, audit);
    const std::vector<enforce::NetworkRefusal> refused_hosts = network_refusals(run.network_token);
    if (const auto& setup = run.enforced->setup_failure()) {
        // The probe passed, or its verdict was kept: whatever changed since, the next run probes again.
        if (probe_cache_)
            probe_cache_->forget();
        audit.status = audit::TaskStatus::refused;
        audit.reason = fmt::format("its sandbox could not be built: {}; {}", *setup, kUnsandboxHint);
    } else if (!failed_to_run.empty()) {
        audit.status = audit::TaskStatus::not_audited;
        audit.reason = "it could not run: " + failed_to_run;
    } else if (interrupted) {
        // Nothing it wrote is applied: the workspace stays as it was before it started.
        audit.status = audit::TaskStatus::not_audited;
        audit.reason = "the run was interrupted before it finished; nothing it wrote was kept";
    } else {
        // Applied whether it succeeded or not, as its outputs would be there without the sandbox.
        auto keep = [&](std::string_view rel, bool directory) {
            return run.rules.write(root + "/" + std::string(rel), directory).allowed();
        };
        // A link may lead anywhere inside the workspace but its root, read as its text says
        // (link_destination: the rule the cache holds its entries to): one leading away would be written
        // through later, by tasks and tools that trust the workspace. One to an input (out/a -> ../src/a)
        // is applied as a plain run leaves it; the cache keeps no entry holding it, in every mode alike.
        auto may_link = [&](std::string_view rel, std::string_view target) {
            std::optional<std::string> to = link_destination(rel, target);
            return to && !to->empty();
        };
        for (const auto& layer : run.enforced->layers()) {
            auto changes = enforce::read_upper_layer(layer.upper, root);
            if (!changes) {
                kept = changes.error();
                break;
            }
            auto applied = enforce::apply(layer.upper, root, *changes, keep, layer.trash, may_link);
            if (!applied) {
                kept = applied.error();
                break;
            }
            // A directory qk made for the task's outputs, which it left empty, is qk's doing, not a write.
            const auto& made = run.directories.created();
            for (const auto& d : applied->discarded) {
                std::error_code ec;
                if (std::find(made.begin(), made.end(), d.path) != made.end() &&
                    std::filesystem::is_empty(layer.upper / d.path, ec))
                    continue;
                // Git's configuration and hooks, and what was installed, are refused as under Landlock
                // alone: the task went on believing it changed what git runs or what other tasks load.
                const auto why = run.rules.write(root + "/" + d.path, false).why;
                const bool held = why == rules::PathClass::git_machinery || why == rules::PathClass::installed_files;
                (held ? audit.findings.refused_writes : audit.findings.discarded_writes).push_back(d.path);
            }
            for (const auto& l : applied->refused_links) {
                audit.findings.refused_writes.push_back(l.path);
                audit.refused_links[l.path] = l.target;
            }
        }
        if (run.recording)
            audit::refused_accesses(run.recording->recording(), run.rules,
                                    {.landlock_only = !overlay_, .failed = run.command_failed, .rules_built = run.started},
                                    audit.findings);
        for (const enforce::NetworkRefusal& n : refused_hosts)
            audit.findings.refused_network.push_back(
                n.host.find(':') != std::string::npos ? fmt::format("[{}]:{}", n.host, n.port)
                                                      : fmt::format("{}:{}", n.host, n.port));
        audit.findings.normalise();
        audit.provenance.overlay = overlay_;
    }
    if (run.recording && audit.status != audit::TaskStatus::refused) {
        audit.provenance.recorder = std::string(recorder_->name());
        audit.provenance.lost_events = run.recording->recording().lost_events();
    }
    run.directories.remove_empty();
    // Said in the report too (its reason), and gathered on one line of the summary.
    if (auto said = note_outputs_made(run.task, run.outputs_qk_made); said && audit.status == audit::TaskStatus::enforced)
        audit.reason = *said;
    for (const auto& layer : run.enforced->layers())
        remove_later(layer);
    {
        std::lock_guard lock(mutex_);
        audit_.landlock_abi = std::max(audit_.landlock_abi, run.enforced->landlock_abi());
    }
    add(std::move(audit));
    if (!kept)
        return error("its outputs could not be applied to the workspace: " + kept.error().message);
    return {};
}

}  // namespace qk::sandbox
