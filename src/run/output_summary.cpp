// The closing summary of OutputDisplay, in Nx's words where Nx has some.
#include <algorithm>

#include <fmt/format.h>

#include "output_display.hpp"
#include "qk/util/printable.hpp"

namespace qk::run {

namespace {

std::string plural(std::size_t n, std::string_view one, std::string_view many)
{
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

// "target build" or "targets build, test"; "for 3 projects and 2 tasks they depend on".
std::string what_ran(const RunSummary& run)
{
    std::string targets = fmt::format("{} {}", run.targets.size() == 1 ? "target" : "targets",
                                      fmt::join(run.targets, ", "));
    std::string text = fmt::format("{} for {}", targets, plural(run.projects, "project", "projects"));
    if (run.dependency_tasks > 0)
        text += fmt::format(" and {} they depend on", plural(run.dependency_tasks, "task", "tasks"));
    return text;
}

// The results the cache refused, after the counts: the outputs are in the workspace, and what to do.
std::string not_cached_lines(const RunSummary& run)
{
    if (run.not_cached.empty())
        return {};
    std::string text = fmt::format("  {} not cached, the cache refusing what {} left (the outputs stay in the "
                                   "workspace):\n",
                                   plural(run.not_cached.size(), "result", "results"),
                                   run.not_cached.size() == 1 ? "its task" : "their tasks");
    for (const RunSummary::NotCached& n : run.not_cached)
        text += fmt::format("    {}: {}\n", printable(n.task), printable(n.why));
    return text;
}

}  // namespace

// Results stored for tasks that declare their network: a key holds files, not what a server answered.
std::string OutputDisplay::network_line_locked() const
{
    const std::size_t n =
        static_cast<std::size_t>(std::count_if(tasks_.begin(), tasks_.end(), [](const Task& t) { return t.network; }));
    if (n == 0)
        return {};
    return fmt::format("  {} of tasks that declare their network (\"qk:sandbox\": {{\"network\": true or a list}}): "
                       "{} alone {} not reproduce {}, as what {} fetched is in no key (nx.json's "
                       "qk.remoteCache.uploadNetwork: false keeps such results from the remote cache)\n",
                       plural(n, "result", "results"), n == 1 ? "its key" : "their keys", n == 1 ? "does" : "do",
                       n == 1 ? "it" : "them", n == 1 ? "its task" : "they");
}

std::string OutputDisplay::summary_text_locked(const RunSummary& run) const
{
    std::size_t succeeded = 0, restored = 0, failed = 0, skipped = 0, not_run = 0;
    for (const auto& t : tasks_) {
        switch (t.state) {
        case State::succeeded: ++succeeded; break;
        case State::restored: ++succeeded, ++restored; break;
        case State::failed: ++failed; break;
        case State::skipped: ++skipped; break;
        case State::pending:
        case State::running: ++not_run; break;
        }
    }
    // Restores from the server told apart from local ones: a run that shares nothing looks the same otherwise.
    std::string from_cache;
    if (restored && run.restored_remote)
        from_cache = fmt::format(" ({} restored from the cache, {} of them from the remote cache)", restored,
                                 run.restored_remote);
    else if (restored)
        from_cache = fmt::format(" ({} restored from the cache)", restored);
    if (!run.interrupted && failed == 0 && skipped == 0 && not_run == 0)
        return fmt::format("\n{} Successfully ran {}{}\n", mark("✔", 32), what_ran(run), from_cache) +
               not_cached_lines(run) + network_line_locked() + run.remote;

    std::vector<std::string> parts;
    if (succeeded)
        parts.push_back(fmt::format("{} succeeded{}", succeeded, from_cache));
    if (failed)
        parts.push_back(fmt::format("{} failed", failed));
    if (skipped)
        parts.push_back(fmt::format("{} skipped", skipped));
    if (not_run)
        parts.push_back(fmt::format("{} not run", not_run));
    std::string text = fmt::format("\n{} {} {}: {}\n", mark("✖", 31),
                                   run.interrupted ? "Interrupted while running" : "Ran", what_ran(run),
                                   fmt::join(parts, ", "));

    std::size_t width = 0;
    for (const auto& t : tasks_)
        if (t.state == State::failed || t.state == State::skipped)
            width = std::max(width, t.shown.size());
    for (const auto& t : tasks_) {
        if (t.state == State::failed)
            text += fmt::format("  {} {:<{}}  {}\n", mark("✖", 31), t.shown, width, describe_exit(t.status));
    }
    for (const auto& t : tasks_) {
        if (t.state == State::skipped)
            text += fmt::format("  {} {:<{}}  skipped: {} failed\n", mark("-", 2), t.shown, width, t.because);
    }
    return text + not_cached_lines(run) + network_line_locked() + run.remote;
}

}  // namespace qk::run
