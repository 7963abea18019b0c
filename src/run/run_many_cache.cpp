// RunMany's side of the cache: finding a task's result (through the read sets --record saved, when its
// key has some) and storing one (with its read set, or plainly).
#include "qk/run/run_many.hpp"

#include "qk/sandbox/sandbox.hpp"
#include "output_display.hpp"
#include "remote_share.hpp"
#include "qk/report/entry_report.hpp"

namespace qk::run {

std::optional<key::CacheHit> RunMany::lookup(std::size_t i, const key::TaskKey& key, std::string& why)
{
    const std::string& id = runs_[i].task;
    auto found = [&](const key::Hash128& hash) -> std::optional<key::CacheHit> {
        std::string miss_reason;
        auto hit = cache_->find(hash, &miss_reason);
        if (!hit) {
            display_->note(id, "cannot read the cache: " + hit.error().message);
            return std::nullopt;
        }
        if (!miss_reason.empty())
            display_->note(id, "a cache entry could not be used and was removed: " + miss_reason);
        return std::move(*hit);
    };
    auto sets = read_sets_->sets(key.hash);
    if (!sets)
        display_->note(id, sets.error().message);
    if (!sets || sets->empty()) {
        // Under --record, a result keyed by the task's declarations alone (stored by a run without it)
        // is not trusted: it could replay what an undeclared read held then. The task runs, is recorded,
        // and its result is stored with its reads.
        if (sandbox_ && sandbox_->records_for_cache(i)) {
            why = "--record: no result saved with its reads yet";
            return std::nullopt;
        }
        // A prefetched entry is taken first: it may be in the local cache already, brought by the prefetch.
        std::optional<RemoteShare::Fetched> fetched;
        bool asked = remote_ && remote_->prefetched(key.hash);
        if (asked)
            fetched = remote_->fetch(key.hash, id);
        auto hit = found(key.hash);
        // Asked even when a fault stopped the fetches: the share counts what it no longer asks for.
        if (!hit && !asked && remote_) {
            fetched = remote_->fetch(key.hash, id);
            if (fetched)
                hit = found(key.hash);
        }
        if (hit && fetched) {
            from_remote_[i] = true;
            remote_records_[i] = std::move(fetched->record);
        }
        if (!hit) {
            why = "no cache entry for its key";
            if (auto before = history_->last(id))
                if (auto moved = key::first_difference(*before, key::key_parts(key, session_->files())))
                    why = *moved + " since its last stored result";
        }
        return hit;
    }
    // Recordings key its results: one is restored only through a set whose every read still holds what
    // it held. The newest set's change is the one to tell.
    std::string first_change;
    for (const key::ReadSet& set : *sets) {
        if (auto changed = key::first_changed(set, session_->workspace().root())) {
            if (first_change.empty())
                first_change = *changed;
            continue;
        }
        if (auto hit = found(set.result))
            return hit;
    }
    why = first_change.empty() ? "the result its recorded reads match is no longer in the cache"
                               : "a recorded read changed: " + first_change;
    display_->note(id, why);
    return std::nullopt;
}

void RunMany::store(std::size_t i, const key::TaskKey& key, const key::CacheRecord& record)
{
    const std::string& id = runs_[i].task;
    auto not_cached = [&](const std::string& why) { display_->note(id, "the result was not cached: " + why); };
    if (auto changed = changed_while_running(i, key))
        return not_cached(*changed);
    if (std::optional<std::string> why = sandbox_ ? sandbox_->withheld(i) : std::nullopt)
        return not_cached(*why);
    if (sandbox_ && sandbox_->changed(i))
        return;  // said as the task ended
    (void)history_->remember(id, key::key_parts(key, session_->files()));  // a hint: never fails a task
    // What it fetched is in no key: said once in the summary, and the remote cache's uploadNetwork asks it.
    const workspace::Target* target = session_->tasks().tasks()[i].target;
    const bool network = target && (target->sandbox.network.mode == workspace::NetworkDeclaration::Mode::any ||
                                    target->sandbox.network.mode == workspace::NetworkDeclaration::Mode::hosts);
    if (network)
        display_->stored_with_network(id);
    std::optional<Result<key::ReadSet>> recorded = sandbox_ ? sandbox_->take_read_set(i) : std::nullopt;
    if (recorded) {
        if (!*recorded)
            return not_cached(recorded->error().message);
        key::ReadSet set = std::move(**recorded);
        set.result = set.result_key(key.hash);
        // The entry first: a manifest naming a missing entry is a miss, an entry nobody names is litter.
        std::string warm_note;
        if (auto st = cache_->store(set.result, record, &warm_note); !st)
            return not_cached(st.error().message);
        if (!warm_note.empty())
            display_->note(id, warm_note);
        if (auto st = read_sets_->add(key.hash, id, std::move(set)); !st)
            return not_cached("its recorded reads could not be saved: " + st.error().message);
        if (remote_)
            remote_->keep_local(KeptLocal::read_keyed);
        // Its results are keyed by reads now: an entry under the declared key alone, from a run without
        // --record, would be restored unchecked were the manifest lost.
        cache_->remove(key.hash);
        return;
    }
    // Recordings of this key found reads it leaves out: a plain entry would replay whatever they held.
    if (auto sets = read_sets_->sets(key.hash); sets && !sets->empty())
        return not_cached("its results are keyed by what it read, which only --record saves");
    key::CacheRecord with_record = record;
    const std::optional<audit::TaskAudit> seen = add_record(i, with_record);
    std::string warm_note;
    if (auto st = cache_->store(key.hash, with_record, &warm_note); !st)
        return not_cached(st.error().message);
    if (!warm_note.empty())
        display_->note(id, warm_note);
    if (remote_)
        remote_->upload(key.hash, id, share_verdict(seen ? &*seen : nullptr), network);
}

std::optional<audit::TaskAudit> RunMany::add_record(std::size_t i, key::CacheRecord& record)
{
    if (!machine_ || !sandbox_)
        return std::nullopt;
    std::optional<audit::TaskAudit> seen = sandbox_->record_of(i);
    if (!seen)
        return std::nullopt;
    seen->hash = runs_[i].hash;
    stamp_task(*seen, *machine_);
    record.provenance = report::entry_report_json(*seen, entry_header_);
    return seen;
}

}  // namespace qk::run
