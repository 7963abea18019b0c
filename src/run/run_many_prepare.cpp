// RunMany::prepare: everything that can be found wrong found before any task starts (the workspace, the
// task graph, each task's key, scratch and warm paths), then the cache, the workspace's lock, what an
// earlier killed run left running, the sandbox and the remote cache opened.
#include "qk/run/run_many.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/key/inputs.hpp"
#include "qk/record/launcher.hpp"
#include "qk/remote/remote_cache.hpp"
#include "qk/run/scratch.hpp"
#include "qk/sandbox/sandbox.hpp"
#include "qk/util/printable.hpp"
#include "command_runner.hpp"
#include "output_display.hpp"
#include "remote_share.hpp"
#include "workspace_lock.hpp"

namespace qk::run {

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

// The options that cannot go together, and the reports' directories, before the workspace is read.
Status check_request(const RunRequest& request)
{
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
    return {};
}

}  // namespace

Result<std::unique_ptr<RunMany>> RunMany::prepare(const RunRequest& request)
{
    auto self = std::unique_ptr<RunMany>(new RunMany());
    self->request_ = request;
    QK_TRY_STATUS(check_request(request));
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

}  // namespace qk::run
