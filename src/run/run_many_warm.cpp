// RunMany's side of warm state (qk/key/warm_state.hpp): put in place before a task that must run, or with
// the entry restored, wherever the workspace holds none of it. Warm state only spares a tool work, so
// nothing here fails a task: what cannot be put in place is said, and the tool starts cold.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/run/run_many.hpp"
#include "output_display.hpp"

namespace qk::run {

void RunMany::put_warm(std::size_t i, const key::CacheHit* hit)
{
    if (warm_[i].empty()) {
        if (!hit && !warm_problem_[i].empty())
            display_->note(runs_[i].task, "its warm state is not kept: " + warm_problem_[i]);
        return;
    }
    const std::string& id = runs_[i].task;
    auto say = [&](const std::string& what) { display_->note(id, what); };
    auto warm = key::OutputSet::compile(warm_[i]);
    auto outputs = session_->compiled_outputs(i);
    if (!warm || !outputs)
        return say("its warm state cannot be put in place: " + (!warm ? warm.error() : outputs.error()).message);
    // The entry restored keeps the warm state its outputs were made with; without any (stored before
    // warm paths were declared, or fetched from a shared cache, which carries none), the newest the task
    // left stands in, as it does for a task that must run.
    std::vector<key::Hash128> from;
    if (hit)
        from.push_back(hit->hash);
    if (auto newest = cache_->last_warm(id); newest && (!hit || *newest != hit->hash))
        from.push_back(*newest);
    for (const key::Hash128& hash : from) {
        auto put = cache_->restore_warm(hash, id, *warm, **outputs);
        if (!put)
            return say("its warm state was not put in place: " + put.error().message);
        if (!*put)
            continue;
        const key::WarmRestored& r = **put;
        if (!r.links.empty())
            say(fmt::format("its warm state was not put in place under {}: a symbolic link stands there or on "
                            "the way, and qk never writes through one",
                            fmt::join(r.links, ", ")));
        // A restore is quiet, as the outputs it comes with are; a task that runs says it starts warm.
        if (!hit && !r.restored.empty())
            say(fmt::format("warm state put in place before it runs: {} ({} from its entry {})",
                            fmt::join(r.restored, ", "), r.files == 1 ? "1 path" : fmt::format("{} paths", r.files),
                            hash.hex().substr(0, 12)));
        return;
    }
}

}  // namespace qk::run
