// RunMany's run as a whole: the scheduler over the tasks, the summary and the reports at its end, a cancel
// from another thread. Preparing the run is run_many_prepare.cpp, one task run_many_task.cpp.
#include "qk/run/run_many.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "qk/record/launcher.hpp"
#include "qk/remote/remote_cache.hpp"
#include "qk/report/run_identity.hpp"
#include "qk/util/printable.hpp"
#include "qk/sandbox/sandbox.hpp"
#include "command_runner.hpp"
#include "output_display.hpp"
#include "remote_share.hpp"
#include "scheduler.hpp"
#include "workspace_lock.hpp"

namespace qk::run {

RunMany::RunMany() : launcher_(std::make_unique<record::ProcessLauncher>()) {}

RunMany::~RunMany()
{
    // The workspace model, file index and keys are memory alone, hundreds of thousands of small
    // allocations in a large workspace: the process exits right after a run, and freeing them one by
    // one took 5% of a cached run. Everything holding a lock, a process or a kernel object is released
    // as usual.
    (void)session_.release();
}

namespace {

// What the summary says was asked: the targets, the projects that have them and the tasks run only as
// dependencies. `targets` is -t's list (empty for qk run P:T).
void count_requested(const std::vector<workspace::Task>& tasks, const std::vector<std::string>& targets,
                     RunSummary& summary)
{
    std::set<std::size_t> projects;
    std::set<std::string, std::less<>> ran;  // the targets of the requested tasks
    for (const workspace::Task& t : tasks) {
        if (t.requested)
            projects.insert(t.project);
        else
            ++summary.dependency_tasks;
        if (t.requested)
            ran.insert(t.target->name);
        // qk run P:T gives its task as written, not as -t targets.
        if (t.requested && targets.empty() &&
            std::find(summary.targets.begin(), summary.targets.end(), t.target->name) == summary.targets.end())
            summary.targets.push_back(t.target->name);
    }
    // As Nx says it: the -t targets some project has, in the order asked (one no project has, as a
    // target with neither executor nor command nor dependsOn, ran nowhere).
    for (const std::string& target : targets)
        if (ran.contains(target))
            summary.targets.push_back(target);
    summary.projects = projects.size();
}

}  // namespace

int RunMany::dry_run()
{
    std::string out;
    const auto& tasks = session_->tasks().tasks();
    for (std::size_t i = 0; i < tasks.size(); ++i)
        out += fmt::format("{} {}\n", printable(tasks[i].id), session_->keys().computed(i)->hash.hex());
    fd_sink(request_.output_fd)(out);
    return 0;
}

Result<int> RunMany::run()
{
    if (request_.dry_run)
        return dry_run();
    const auto& tasks = session_->tasks().tasks();
    std::vector<std::string> ids;
    std::vector<SchedulerNode> nodes;
    for (const workspace::Task& t : tasks) {
        ids.push_back(t.id);
        nodes.push_back(SchedulerNode{t.deps, !t.target->parallelism});
    }
    DisplayOptions options;
    options.is_terminal = request_.is_terminal;
    options.columns = terminal_columns(request_.output_fd);
    // Without --output-style: each line as it comes, and a fully cached run quiet (one line a task).
    options.style = request_.output_style.value_or(OutputStyle::stream);
    options.replay_restored = request_.output_style && *request_.output_style != OutputStyle::dynamic;
    display_ = std::make_unique<OutputDisplay>(ids, fd_sink(request_.output_fd), options);

    for (const std::string& note : session_->tasks().notes())
        fd_sink(request_.output_fd)("qk: " + printable_message(note) + "\n");  // it names tasks
    if (sandbox_)
        if (std::string notice = sandbox_->notice(); !notice.empty())
            fd_sink(request_.output_fd)(notice);

    if (remote_client_) {
        auto share = std::make_unique<RemoteShare>(std::move(remote_client_), *remote_policy_, *cache_, *display_);
        {
            std::lock_guard l(parts_mutex_);
            remote_ = std::move(share);
            if (cancelled_)
                remote_->cancel();
        }
        prefetch_remote();
    }
    if (sandbox_ && request_.sandbox != sandbox::SandboxMode::off) {
        // What each stored entry's record says of where it ran; read now, before tasks run on threads.
        entry_header_ = sandbox_->header();
        entry_header_.run = run_identity();
        machine_ = report::machine_provenance(entry_header_.run, sandbox::machine_landlock_abi());
    }

    unsigned parallel = parallel_;
    {
        // A cancel() from now on reaches the scheduler; one before it is passed on here.
        std::lock_guard l(parts_mutex_);
        scheduler_ = std::make_unique<Scheduler>(std::move(nodes), parallel);
        if (cancelled_)
            scheduler_->cancel();
    }
    auto results = scheduler_->run([this](std::size_t i) { return run_task(i); },
                                   [this, &tasks](std::size_t i, const NodeResult& r) {
                                       if (r.state == NodeResult::State::skipped)
                                           display_->skipped(tasks[i].id, tasks[r.because].id);
                                   });
    if (remote_)
        remote_->finish();  // the uploads under way, before the summary
    if (!results)
        return results.error();
    (void)session_->files().save_hash_cache(true);  // the run's last: unused entries for outputs go

    RunSummary summary;
    count_requested(tasks, request_.tasks.targets, summary);
    summary.interrupted = cancelled_;
    for (key::LocalCache::Refusal& r : cache_->refused())
        summary.not_cached.push_back({std::move(r.task), std::move(r.why)});
    if (remote_) {
        summary.remote = remote_summary(remote_->tally());
        summary.restored_remote = static_cast<std::size_t>(std::count_if(runs_.begin(), runs_.end(), [](const auto& r) {
            return r.source == report::ResultSource::restored_remote;
        }));
    }
    display_->summary(summary);
    for (std::size_t i = 0; i < results->size(); ++i) {
        using State = NodeResult::State;
        switch ((*results)[i].state) {
        case State::succeeded: runs_[i].status = report::RunStatus::succeeded; break;
        case State::failed: runs_[i].status = report::RunStatus::failed; break;
        case State::skipped: runs_[i].status = report::RunStatus::skipped; break;
        case State::cancelled: runs_[i].status = report::RunStatus::cancelled; break;
        }
    }
    bool reported = report_audit() && write_run_report();
    if (!reported)
        return 1;
    for (const NodeResult& r : *results)
        if (r.state != NodeResult::State::succeeded)
            return 1;
    return 0;
}

void RunMany::prefetch_remote()
{
    if (!remote_->reads() || skip_cache_)
        return;
    // The tasks whose key is known now and whose entry is not here: what a fresh checkout asks for.
    std::vector<std::pair<key::Hash128, std::string>> wanted;
    const auto& tasks = session_->tasks().tasks();
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (!tasks[i].target->cache || rekey_[i] || (sandbox_ && sandbox_->records_for_cache(i)))
            continue;
        const key::Hash128& hash = session_->keys().computed(i)->hash;
        std::error_code ec;
        if (std::filesystem::exists(cache_->dir() / hash.hex(), ec))
            continue;
        if (auto sets = read_sets_->sets(hash); !sets || !sets->empty())
            continue;  // keyed by what it read: the read sets choose, locally
        wanted.emplace_back(hash, tasks[i].id);
    }
    remote_->prefetch(wanted);
}

void RunMany::cancel()
{
    cancelled_ = true;
    {
        std::lock_guard l(parts_mutex_);
        if (remote_)
            remote_->cancel();
        if (scheduler_)
            scheduler_->cancel();
    }
    std::lock_guard l(running_mutex_);
    for (CommandRunner* r : running_)
        r->cancel();
}

}  // namespace qk::run
