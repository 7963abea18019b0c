// RemoteShare: run-many's side of a remote cache (qk/remote). On a local miss it fetches the entry into the
// local cache, checked whole (each file's size and hash, the server's signature or SHA-256) before it is an
// entry, and judged by the trust policy; after a task stored its result it uploads the entry when the
// upload policy allows, in the background. A fault is said once per kind and the run goes on as on a miss:
// a server down, slow or refusing never fails a task.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/key/cache.hpp"
#include "qk/remote/remote_cache.hpp"
#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"
#include "qk/run/remote_policy.hpp"
#include "remote_tally.hpp"

namespace qk::run {

class OutputDisplay;

class RemoteShare {
public:
    // A fetched entry's record (what the sandbox saw where it ran), when it carries one.
    struct Fetched {
        std::optional<audit::TaskAudit> record;
    };

    RemoteShare(std::unique_ptr<remote::RemoteCache> server, RemotePolicy policy, key::LocalCache& cache,
                OutputDisplay& display);
    ~RemoteShare();  // waits for the uploads still under way (each bounded by the stall timeout)
    RemoteShare(const RemoteShare&) = delete;
    RemoteShare& operator=(const RemoteShare&) = delete;

    bool reads() const
    {
        std::lock_guard lock(mutex_);  // a fault on another thread may turn reading off
        return policy_.read;
    }

    // The entry for `hash` from the server into the local cache, for task `id`: nullopt on a miss, a
    // fault (said once) or an entry the trust policy refuses (said once). Called from task threads.
    std::optional<Fetched> fetch(const key::Hash128& hash, const std::string& id);

    // Starts fetching `wanted` (a hash and its task's id each) in the background, several at once: a fresh
    // checkout's misses go to the server together rather than one task at a time. fetch() of one of them
    // waits for its transfer instead of starting another.
    void prefetch(const std::vector<std::pair<key::Hash128, std::string>>& wanted);
    // Whether `hash` was handed to prefetch() and not yet taken by fetch().
    bool prefetched(const key::Hash128& hash) const;
    // The run is stopping: no more prefetching and no upload not yet started (transfers under way end,
    // each bounded by the stall timeout; a dropped prefetch's fetch() asks itself).
    void cancel();

    // Uploads the stored entry for `hash` in the background when the policy allows: any result, or only
    // a verified one (`verdict`: share_verdict of the record stored with it); else counts why not. An entry
    // this run refused from the server is sent over it, without asking whether the server holds it.
    // `network`: its task declares its network, which the policy's uploadNetwork: false keeps local.
    void upload(const key::Hash128& hash, const std::string& id, ShareVerdict verdict, bool network = false);
    // A stored result the run keeps from the server for `why` (counted for the summary).
    void keep_local(KeptLocal why);
    // The entry fetched for `hash` was refused after all, being no entry of its task's (the outputs it
    // names are not the task's): counted as refused rather than restored, and replaced like a damaged one.
    void refuse_fetched(const key::Hash128& hash);

    // Waits for every upload queued; the tally is final after it.
    void finish();

    RemoteTally tally() const;

private:
    struct Upload {
        key::Hash128 hash;
        std::string id;
    };
    std::optional<Fetched> fetch_now(const key::Hash128& hash, const std::string& id);
    void prefetch_loop();
    void stop_prefetching_locked();
    void upload_loop();
    void send(const Upload& u);
    // The upload left in the queue by a stop, counted with why it was not sent (mutex_ held).
    void drop_locked(const Upload& u);
    // Says what failed once per kind of fault, on the task that met it first (a server failing both ways
    // is one fault).
    enum class Direction : std::uint8_t { fetch, upload };
    void fault(const std::string& id, const Error& e, Direction way);

    std::unique_ptr<remote::RemoteCache> server_;
    RemotePolicy policy_;
    key::LocalCache& cache_;
    OutputDisplay& display_;

    mutable std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<Upload> queue_;
    std::size_t busy_ = 0;
    bool stopping_ = false;
    bool forbidden_ = false;  // a read-only token: nothing more is uploaded
    bool cancelled_ = false;  // the run was stopped: nothing more is sent
    bool gone_ = false;       // the server stopped answering: nothing more is asked or sent
    std::set<ErrorKind> said_;
    bool said_untrusted_ = false;
    RemoteTally tally_;
    // Entries the server gave that this run refused as damaged (by hash hex): its own result goes over them.
    std::set<std::string> damaged_;
    std::vector<std::thread> uploaders_;

    // Prefetching: the hashes wanted, in order; each one's result once fetched (nullopt: a miss or a
    // fault); which are under way. fetch() of a wanted hash waits on prefetched_ until it is done.
    struct Prefetch {
        key::Hash128 hash;
        std::string id;
    };
    std::deque<Prefetch> prefetch_queue_;
    std::map<std::string, std::optional<Fetched>> prefetched_;  // by hash hex: done
    std::set<std::string> prefetching_;                         // by hash hex: queued or under way
    std::condition_variable prefetch_done_;
    std::vector<std::thread> prefetchers_;
};

}  // namespace qk::run
