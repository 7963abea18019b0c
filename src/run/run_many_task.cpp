// RunMany::run_task: one task, restored from the cache when its entry is there and whole, else run (in the
// sandbox when there is one) and stored when it succeeds.
#include "qk/run/run_many.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/key/cache_in_place.hpp"
#include "qk/key/outputs.hpp"
#include "qk/record/launcher.hpp"
#include "qk/run/scratch.hpp"
#include "qk/sandbox/sandbox.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/version.hpp"
#include "command_runner.hpp"
#include "output_display.hpp"
#include "remote_share.hpp"
#include "scheduler.hpp"

namespace qk::run {

namespace {

const std::string kMadeBy = std::string("qk ") + qk::version();

}  // namespace

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

bool RunMany::restore_task(std::size_t i, const key::TaskKey& key, report::TaskRun& run)
{
    const workspace::Task& t = session_->tasks().tasks()[i];
    auto hit = lookup(i, key, run.ran_because);
    // An entry names the outputs it restores, and restoring first clears what they name: an entry
    // whose outputs are not the task's own (one a server made up: "libs/lib/src") is refused, or it
    // would remove and replace files the task never declared.
    if (hit && hit->outputs != key.outputs.paths) {
        std::string why = fmt::format("its cache entry restores other outputs ({}) than the task declares ({})",
                                      printable(fmt::format("{}", fmt::join(hit->outputs, ", "))),
                                      printable(fmt::format("{}", fmt::join(key.outputs.paths, ", "))));
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
            return true;
        }
        display_->note(t.id, "cannot restore from the cache, running instead: " + restored.error().message);
        run.ran_because = "its cache entry could not be restored: " + restored.error().message;
    }
    return false;
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
    if (cacheable && !skip_cache_ && restore_task(i, **key, run))
        return Outcome::succeeded;
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
