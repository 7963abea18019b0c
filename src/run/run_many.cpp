#include "qk/run/run_many.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/key/cache_in_place.hpp"
#include "qk/key/inputs.hpp"
#include "qk/key/outputs.hpp"
#include "qk/record/launcher.hpp"
#include "qk/remote/remote_cache.hpp"
#include "qk/report/run_identity.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/version.hpp"
#include "qk/run/scratch.hpp"
#include "qk/sandbox/sandbox.hpp"
#include "command_runner.hpp"
#include "output_display.hpp"
#include "remote_share.hpp"
#include "scheduler.hpp"
#include "workspace_lock.hpp"

namespace qk::run {

namespace {

const std::string kMadeBy = std::string("qk ") + qk::version();

}  // namespace

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

// As Nx: --parallel, else NX_PARALLEL, else nx.json's parallel, else (qk's default) the number of cores.
unsigned run_parallel(const RunRequest& request, const workspace::NxConfig& nx)
{
    if (request.parallel)
        return request.parallel;
    if (request.settings.run.parallel)
        return *request.settings.run.parallel;
    if (nx.parallel)
        return nx.parallel;
    return std::max(1u, std::thread::hardware_concurrency());
}

// The keys hash their files group by group, a few dozen at a time: too few to share among threads. When
// the run's tasks span many projects, hash those projects' files first, in one batch on every core
// (each file once; the persistent cache makes most of it a stat). A file that cannot be hashed is left
// for the key that needs it to report.
void prehash_project_files(key::Session& s)
{
    constexpr std::size_t kMinProjects = 64;
    std::vector<bool> seen(s.workspace().projects().size(), false);
    std::vector<std::uint32_t> files;
    std::size_t projects = 0;
    for (const workspace::Task& t : s.tasks().tasks())
        if (!seen[t.project]) {
            seen[t.project] = true;
            ++projects;
            auto own = s.files().files_of(t.project);
            files.insert(files.end(), own.begin(), own.end());
        }
    if (projects >= kMinProjects)
        (void)s.files().hash(files);
}

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

Result<std::unique_ptr<RunMany>> RunMany::prepare(const RunRequest& request)
{
    auto self = std::unique_ptr<RunMany>(new RunMany());
    self->request_ = request;
    for (const std::string* file : {&request.report}) {
        if (file->empty())
            continue;
        std::filesystem::path dir = std::filesystem::absolute(*file).parent_path();
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec))
            return error(fmt::format("--report {}: the directory {} does not exist", *file, dir.string()));
    }
    if (request.record && request.sandbox == sandbox::SandboxMode::enforce)
        return error("--record cannot be combined with --sandbox=enforce yet: record with --sandbox (audit), or "
                     "enforce without --record");
    if (!request.sandbox_report.empty()) {
        if (request.sandbox == sandbox::SandboxMode::off)
            return error("--sandbox-report needs --sandbox: without it no task is audited");
        std::filesystem::path dir = std::filesystem::absolute(request.sandbox_report).parent_path();
        std::error_code ec;
        if (!std::filesystem::is_directory(dir, ec))
            return error(fmt::format("--sandbox-report {}: the directory {} does not exist", request.sandbox_report,
                                     dir.string()));
    }
    QK_TRY(session, key::Session::open(request.directory));
    self->session_ = std::move(*session);
    key::Session& s = *self->session_;
    QK_TRY_STATUS(s.plan(request.tasks));

    // Everything that can be found wrong is found now, before any task starts.
    const auto& tasks = s.tasks().tasks();
    prehash_project_files(s);
    self->rekey_.assign(tasks.size(), false);
    self->scratch_.resize(tasks.size());
    self->warm_.resize(tasks.size());
    self->warm_problem_.resize(tasks.size());
    std::vector<TaskScratch> scratch;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
        const workspace::Task& t = tasks[i];
        if (!t.target->run.problem.empty())
            return error(fmt::format("task {} cannot run: {}", t.id, t.target->run.problem));
        QK_TRY(dirs, resolve_scratch(s.workspace(), s.workspace().projects()[t.project], *t.target));
        if (auto st = check_scratch(s.workspace(), *dirs); !st)
            return error(fmt::format("{}: {}", t.id, st.error().message));
        scratch.emplace_back(t.id, *dirs);
        self->scratch_[i] = std::move(*dirs);
        if (!t.target->warm.empty()) {
            auto warm = key::resolve_warm_paths(s.workspace().projects()[t.project], *t.target);
            if (warm)
                self->warm_[i] = std::move(*warm);
            else
                self->warm_problem_[i] = warm.error().message;
        }
        QK_TRY(k, s.keys().key(i));
        bool rekey = !(*k)->inputs.dependent_outputs.empty();
        for (std::size_t d : t.deps)
            rekey = rekey || self->rekey_[d];
        self->rekey_[i] = rekey;
    }
    QK_TRY_STATUS(check_scratch_overlaps(scratch));
    (void)s.files().save_hash_cache();  // a cache that cannot be written costs time, not correctness
    if (request.dry_run)
        return self;

    // Opening makes .qk (with its .gitignore, which only the maker writes) and reads no entry.
    QK_TRY(cache, key::LocalCache::open(s.workspace().root()));
    // One run at a time in a workspace: taken before any entry is read or stored.
    WorkspaceLock::Options lock_options;
    lock_options.wait = !request.no_wait;
    lock_options.waiting = fd_sink(request.output_fd);
    lock_options.interrupted = request.interrupted;
    QK_TRY(lock, WorkspaceLock::acquire(s.workspace().root(), lock_options));
    self->lock_ = std::make_unique<WorkspaceLock>(std::move(*lock));
    self->clear_leftovers();
    self->read_sets_ = std::make_unique<key::ReadSetStore>(key::ReadSetStore::open(cache->dir()));
    self->history_ = std::make_unique<key::TaskHistory>(key::TaskHistory::open(cache->dir()));
    self->cache_ = std::make_unique<key::LocalCache>(std::move(*cache));
    self->cache_->limit_entry(request.settings.cache.max_entry_bytes);
    self->environment_ = current_environment();
    self->parallel_ = run_parallel(request, s.workspace().nx());
    self->skip_cache_ = request.skip_cache || request.settings.run.skip_nx_cache || s.workspace().nx().skip_cache;
    self->runs_.resize(tasks.size());
    for (std::size_t i = 0; i < tasks.size(); ++i)
        self->runs_[i].task = tasks[i].id;
    if (request.sandbox != sandbox::SandboxMode::off || request.record) {
        QK_TRY(opened, sandbox::open_sandbox(request.sandbox, request.recorder, s, request.settings, request.record));
        self->sandbox_ = std::move(opened).value();
    }
    QK_TRY(policy, remote_policy(s.workspace().nx().remote_cache, request.settings.remote_cache, request.remote_cache));
    if (policy->read || policy->write) {
        // Said on stderr as it happens: the run's own output may be a file read after it ends.
        auto waiting = [](const std::string& message) { fd_sink(2)("qk: " + printable_message(message) + "\n"); };
        QK_TRY(client, remote::make_remote_cache(policy->server, waiting));
        self->remote_client_ = std::move(*client);
        self->remote_policy_ = std::make_unique<RemotePolicy>(std::move(*policy));
    }
    self->from_remote_.assign(tasks.size(), false);
    self->remote_records_.resize(tasks.size());
    return self;
}

void RunMany::clear_leftovers()
{
    // A qk killed together with its guardian leaves its tasks running in their cgroups: they could still
    // be writing into outputs that this run would store.
    record::LeftoverReport reaped = record::stop_leftover_commands();
    auto say = fd_sink(request_.output_fd);
    // Empty cgroups removed are not worth a line: nothing ran in them.
    if (reaped.killed)
        say(fmt::format("qk: killed {} process{} that an earlier, killed qk run left running\n", reaped.killed,
                        reaped.killed == 1 ? "" : "es"));
    if (!reaped.still_running.empty()) {
        store_refused_ = fmt::format("processes of an earlier, killed qk run would not die (in {}), and may still "
                                     "write into outputs",
                                     fmt::join(reaped.still_running, ", "));
        say(fmt::format("qk: {}: this run stores nothing in the cache\n", store_refused_));
    }
}

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

Result<std::shared_ptr<const key::TaskKey>> RunMany::key_for(std::size_t i)
{
    if (rekey_[i])
        return session_->keys().key(i);
    return session_->keys().shared(i);
}

TaskContext RunMany::context_for(std::size_t i) const
{
    const workspace::Task& t = session_->tasks().tasks()[i];
    const workspace::Project& p = session_->workspace().projects()[t.project];
    TaskContext c;
    c.root = session_->workspace().root();
    c.project = p.name;
    c.target = t.target->name;
    c.configuration = t.configuration;
    c.package_name = p.package_name;
    c.package_version = p.package_version;
    c.environment = environment_;
    return c;
}

Outcome RunMany::run_task(std::size_t i)
{
    const workspace::Task& t = session_->tasks().tasks()[i];
    auto failed = [&](const std::string& why) {
        display_->note(t.id, why);
        display_->finished(t.id, false, record::ExitStatus{1, 0}, {});
        return Outcome::failed;
    };
    auto key = key_for(i);
    if (!key)
        return failed(key.error().message);
    report::TaskRun& run = runs_[i];
    run.hash = (*key)->hash.hex();
    bool cacheable = t.target->cache;
    run.ran_because = !cacheable ? "caching is off for its target" : "--skip-cache";
    if (cacheable && !skip_cache_) {
        auto hit = lookup(i, **key, run.ran_because);
        // An entry names the outputs it restores, and restoring first clears what they name: an entry
        // whose outputs are not the task's own (one a server made up: "libs/lib/src") is refused, or it
        // would remove and replace files the task never declared.
        if (hit && hit->outputs != (*key)->outputs.paths) {
            std::string why = fmt::format("its cache entry restores other outputs ({}) than the task declares ({})",
                                          printable(fmt::format("{}", fmt::join(hit->outputs, ", "))),
                                          printable(fmt::format("{}", fmt::join((*key)->outputs.paths, ", "))));
            display_->note(t.id, why + "; the entry is removed and the task runs");
            cache_->remove(hit->hash);
            if (from_remote_[i] && remote_)
                remote_->refuse_fetched(hit->hash);
            run.ran_because = std::move(why);
            hit.reset();
        }
        if (hit) {
            // Outputs nobody touched since they were made or restored need no writing.
            bool in_place = key::outputs_in_place(*cache_, *hit, &session_->files());
            Status restored = in_place ? Status{} : cache_->restore(*hit);
            if (restored) {
                put_warm(i, &*hit);
                display_->restored(t.id, hit->terminal_output);
                if (sandbox_ && from_remote_[i] && remote_records_[i])
                    sandbox_->restored_remote(i, std::move(*remote_records_[i]));
                else if (sandbox_)
                    sandbox_->restored(i);
                run.source = in_place         ? report::ResultSource::restored_in_place
                             : from_remote_[i] ? report::ResultSource::restored_remote
                                               : report::ResultSource::restored;
                run.ran_because.clear();
                run.duration_ms = hit->duration.count();
                return Outcome::succeeded;
            }
            display_->note(t.id, "cannot restore from the cache, running instead: " + restored.error().message);
            run.ran_because = "its cache entry could not be restored: " + restored.error().message;
        }
    }
    if (cancelled_)
        return Outcome::failed;
    // Emptied just before it runs (not for a restore, which runs nothing), links checked again.
    for (const std::string& dir : scratch_[i])
        if (auto st = empty_scratch(session_->workspace().root(), dir); !st)
            return failed(fmt::format("cannot empty scratch directory {}: {}", dir, st.error().message));
    // Before the sandbox starts: what its rules walk, and what an overlay shows, is the workspace warm.
    if (cacheable && !skip_cache_)
        put_warm(i, nullptr);

    sandbox::Sandbox::Start sandboxed = sandbox_ ? sandbox_->start(i, scratch_[i]) : sandbox::Sandbox::Start{};
    if (sandboxed.refused)
        return failed("the sandbox refuses to run it: " + *sandboxed.refused +
                      "; set \"qk:sandbox\": false on its target to run it unsandboxed");
    display_->started(t.id);
    run.source = report::ResultSource::ran;
    CommandRunner runner(sandboxed.task ? sandboxed.task->launcher() : *launcher_);
    {
        std::lock_guard l(running_mutex_);
        running_.insert(&runner);
    }
    if (cancelled_)
        runner.cancel();
    auto result = runner.run(t.target->run, context_for(i), [&](std::string_view line) { display_->line(t.id, line); });
    {
        std::lock_guard l(running_mutex_);
        running_.erase(&runner);
    }
    if (sandboxed.task) {
        sandboxed.task->command_failed = result && !result->cancelled && !result->succeeded;
        Status kept = sandbox_->finish(std::move(sandboxed.task), cancelled_ || (result && result->cancelled),
                                       result ? std::string() : result.error().message);
        if (!kept) {
            display_->note(t.id, kept.error().message);
            if (result)
                result->succeeded = false;  // part of its outputs may be missing: never cached
        }
        if (auto said = sandbox_->changed(i))
            display_->note(t.id, *said);
    }
    if (!result)
        return failed(result.error().message);
    run.duration_ms = result->wall.count();
    if (result->succeeded && cacheable && store_refused_.empty())
        store(i, **key, {t.id, (*key)->outputs.paths, result->output, result->wall, kMadeBy, {}, warm_[i]});
    display_->finished(t.id, result->succeeded, result->status, result->wall);
    return result->succeeded ? Outcome::succeeded : Outcome::failed;
}

}  // namespace qk::run
