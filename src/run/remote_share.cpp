// RemoteShare (remote_share.hpp): fetching into the local cache on a miss, uploading in the background,
// and the policy that decides both.
#include "remote_share.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "output_display.hpp"
#include "qk/report/entry_report.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::run {

namespace {

constexpr std::size_t kUploaders = 2;  // transfers at once beside the tasks' own fetches
// Fetches at once ahead of the tasks: a transfer mostly waits on the server, so more than the cores.
constexpr std::size_t kPrefetchers = 8;

// Faults after which asking again would only cost each task the same wait: the run stops using the server.
bool gives_up(ErrorKind kind)
{
    return kind == ErrorKind::remote_unreachable || kind == ErrorKind::remote_timeout;
}

KeptLocal kept_for(ShareVerdict verdict)
{
    switch (verdict) {
    case ShareVerdict::opted_out: return KeptLocal::opted_out;
    case ShareVerdict::not_audited: return KeptLocal::not_audited;
    case ShareVerdict::went_beyond: return KeptLocal::went_beyond;
    case ShareVerdict::not_sandboxed:
    case ShareVerdict::verified: break;
    }
    return KeptLocal::not_sandboxed;
}

}  // namespace

RemoteShare::RemoteShare(std::unique_ptr<remote::RemoteCache> server, RemotePolicy policy, key::LocalCache& cache,
                         OutputDisplay& display)
    : server_(std::move(server)), policy_(std::move(policy)), cache_(cache), display_(display)
{
    tally_.server = server_->describe();
    tally_.read = policy_.read;
    tally_.write = policy_.write;
}

RemoteShare::~RemoteShare()
{
    finish();
}

void RemoteShare::fault(const std::string& id, const Error& e, Direction way)
{
    std::string what;
    {
        std::lock_guard lock(mutex_);
        ++(way == Direction::fetch ? tally_.fetch_faults : tally_.upload_faults)[e.kind];
        if (gives_up(e.kind)) {
            policy_.read = policy_.write = false;
            gone_ = true;
        }
        else if (e.kind == ErrorKind::remote_forbidden && way == Direction::fetch)
            policy_.read = false;  // a token that may not read will not read the next entry either
        bool first = said_.insert(e.kind).second;
        if (!first)
            return;
        what = fmt::format("remote cache {}: {} failed: {}", server_->describe(),
                           way == Direction::fetch ? "fetching" : "uploading", e.message);
        if (gives_up(e.kind))
            what += "; this run goes on without the remote cache";
        else if (e.kind == ErrorKind::remote_forbidden && way == Direction::upload)
            what += " (a read-only token, as pull requests get, is normal): this run uploads nothing";
        else if (way == Direction::fetch)
            what += "; the task runs as on a miss";
        else
            what += "; its result stays in the local cache alone";
    }
    display_.note(id, what);
}

std::optional<RemoteShare::Fetched> RemoteShare::fetch(const key::Hash128& hash, const std::string& id)
{
    const std::string hex = hash.hex();
    {
        std::unique_lock lock(mutex_);
        if (prefetching_.count(hex) || prefetched_.count(hex)) {
            prefetch_done_.wait(lock, [&] { return prefetched_.count(hex) > 0; });
            auto node = prefetched_.extract(hex);
            return std::move(node.mapped());
        }
    }
    return fetch_now(hash, id);
}

void RemoteShare::prefetch(const std::vector<std::pair<key::Hash128, std::string>>& wanted)
{
    std::lock_guard lock(mutex_);
    if (!policy_.read || stopping_)
        return;
    for (const auto& [hash, id] : wanted)
        if (prefetching_.insert(hash.hex()).second)
            prefetch_queue_.push_back({hash, id});
    while (prefetchers_.size() < kPrefetchers && prefetchers_.size() < prefetch_queue_.size())
        prefetchers_.emplace_back([this] { prefetch_loop(); });
}

void RemoteShare::prefetch_loop()
{
    std::unique_lock lock(mutex_);
    while (!prefetch_queue_.empty()) {
        Prefetch p = std::move(prefetch_queue_.front());
        prefetch_queue_.pop_front();
        lock.unlock();
        std::optional<Fetched> got = fetch_now(p.hash, p.id);
        lock.lock();
        const std::string hex = p.hash.hex();
        prefetching_.erase(hex);
        prefetched_.emplace(hex, std::move(got));
        prefetch_done_.notify_all();
    }
}

bool RemoteShare::prefetched(const key::Hash128& hash) const
{
    const std::string hex = hash.hex();
    std::lock_guard lock(mutex_);
    return prefetching_.count(hex) || prefetched_.count(hex);
}

void RemoteShare::stop_prefetching_locked()
{
    // What is still queued is not fetched: its waiters get a miss and ask (or run) themselves.
    for (const Prefetch& p : prefetch_queue_) {
        const std::string hex = p.hash.hex();
        prefetching_.erase(hex);
        prefetched_.emplace(hex, std::nullopt);
    }
    prefetch_queue_.clear();
    prefetch_done_.notify_all();
}

void RemoteShare::cancel()
{
    std::lock_guard lock(mutex_);
    stop_prefetching_locked();
    // A stopped run ends without sending what it had not started to, nor what tasks ending meanwhile
    // would queue: each upload could take a stall timeout, and the user asked it to stop.
    cancelled_ = true;
    for (const Upload& u : queue_)
        drop_locked(u);
    queue_.clear();
    if (busy_ == 0)
        idle_.notify_all();
}

std::optional<RemoteShare::Fetched> RemoteShare::fetch_now(const key::Hash128& hash, const std::string& id)
{
    const std::string hex = hash.hex();
    {
        std::lock_guard lock(mutex_);
        if (!policy_.read) {
            if (tally_.read)  // a fault stopped the fetches
                ++tally_.not_asked;
            return std::nullopt;
        }
    }
    auto refused = [&](const Error& e) {
        if (refused_as_damaged(e.kind)) {
            std::lock_guard lock(mutex_);
            damaged_.insert(hex);
        }
        fault(id, e, Direction::fetch);
        return std::nullopt;
    };
    // The archive goes into an import as it arrives; only a whole, checked transfer becomes an entry.
    key::EntryImport import = cache_.begin_import(hash);
    auto got = server_->get(hex, [&](std::string_view chunk) { return import.write(chunk); });
    if (!got)
        return refused(got.error());
    if (*got == remote::Lookup::miss) {
        std::lock_guard lock(mutex_);
        ++tally_.missed;
        return std::nullopt;
    }
    // The record is read and judged before the entry is put in place: one the trust policy refuses never
    // becomes an entry, not even for the moment a kill could leave it in for a later run to restore.
    Fetched out;
    std::string why_unverified = "it carries no sandbox record";
    bool untrusted = false;
    auto accept = [&](std::string_view doc) -> Status {
        if (!doc.empty()) {
            if (auto record = report::read_entry_report(std::string(doc), "its sandbox record")) {
                out.record = std::move(*record);
                why_unverified = "its sandbox record is not verified (" +
                                 std::string(audit::status_name(out.record->status)) +
                                 (out.record->findings.empty() ? ")" : ", with findings)");
            } else {
                why_unverified = record.error().message;
            }
        }
        untrusted = !policy_.trust_any && !(out.record && audit::verified(*out.record));
        return untrusted ? error("refused by the trust policy") : Status();
    };
    if (auto st = import.finish(accept); !st) {
        if (!untrusted)
            return refused(st.error());
        bool first = false;
        {
            std::lock_guard lock(mutex_);
            ++tally_.untrusted;
            first = !said_untrusted_;
            said_untrusted_ = true;
        }
        if (first)
            display_.note(id, fmt::format("remote cache {}: trust is \"verified\", and this task's entry is not: {}; "
                                          "it runs (said once)",
                                          server_->describe(), why_unverified));
        return std::nullopt;
    }
    std::string unusable;
    auto hit = cache_.find(hash, &unusable);
    if (!hit || !*hit) {
        fault(id, hit ? error(unusable) : hit.error(), Direction::fetch);
        return std::nullopt;
    }
    std::lock_guard lock(mutex_);
    ++tally_.restored;
    return out;
}

void RemoteShare::refuse_fetched(const key::Hash128& hash)
{
    std::lock_guard lock(mutex_);
    if (tally_.restored > 0)
        --tally_.restored;
    ++tally_.fetch_faults[ErrorKind::cache_entry_unsafe];
    damaged_.insert(hash.hex());
}

void RemoteShare::keep_local(KeptLocal why)
{
    std::lock_guard lock(mutex_);
    ++tally_.kept[why];
}

void RemoteShare::drop_locked(const Upload& /*u*/)
{
    ++tally_.kept[cancelled_ ? KeptLocal::interrupted
                  : gone_    ? KeptLocal::server_gone
                  : forbidden_ ? KeptLocal::token
                               : KeptLocal::read_only];
}

void RemoteShare::upload(const key::Hash128& hash, const std::string& id, ShareVerdict verdict, bool network)
{
    std::lock_guard lock(mutex_);
    if (stopping_)
        return;  // after finish(): nothing is counted any more
    // The policy's reason first, where it has one: a result it keeps would not have been sent anyway.
    if (tally_.write && !policy_.upload_any && verdict != ShareVerdict::verified) {
        ++tally_.kept[kept_for(verdict)];
        return;
    }
    if (tally_.write && network && !policy_.upload_network) {
        ++tally_.kept[KeptLocal::network];
        return;
    }
    if (!policy_.write || forbidden_ || cancelled_)
        return drop_locked({hash, id});
    queue_.push_back({hash, id});
    if (uploaders_.size() < kUploaders && uploaders_.size() < queue_.size() + busy_)
        uploaders_.emplace_back([this] { upload_loop(); });
    wake_.notify_one();
}

void RemoteShare::upload_loop()
{
    std::unique_lock lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty())
            return;  // stopping, and nothing left to send
        Upload u = std::move(queue_.front());
        queue_.pop_front();
        if (forbidden_ || !policy_.write) {
            drop_locked(u);
            if (queue_.empty() && busy_ == 0)
                idle_.notify_all();
            continue;
        }
        ++busy_;
        lock.unlock();
        send(u);
        lock.lock();
        --busy_;
        if (queue_.empty() && busy_ == 0)
            idle_.notify_all();
    }
}

void RemoteShare::send(const Upload& u)
{
    const std::string key = u.hash.hex();
    bool replacing = false;
    {
        std::lock_guard lock(mutex_);
        replacing = damaged_.count(key) > 0;
    }
    // Another shard or machine may have sent it already: a HEAD costs less than the entry. Not for an entry
    // this run refused: the server holds one under this key, and it is the damaged one.
    if (!replacing) {
        if (auto there = server_->exists(key); there && *there == remote::Lookup::hit) {
            std::lock_guard lock(mutex_);
            ++tally_.already;
            return;
        }
    }
    // The archive is written to an unnamed file first: both protocols digest the body before sending it.
    std::string tmp = (cache_.dir() / "tmp").string();
    UniqueFd fd(::open(tmp.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (!fd.valid())
        return fault(u.id, sys_error("cannot make a file for the upload in " + tmp), Direction::upload);
    if (auto st = cache_.export_entry(u.hash, fd.get()); !st)
        return fault(u.id, st.error(), Direction::upload);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0)
        return fault(u.id, sys_error("cannot size the upload"), Direction::upload);
    const remote::Source body = remote::file_source(fd.get(), static_cast<std::uint64_t>(st.st_size));
    if (auto put = replacing ? server_->replace(key, body) : server_->put(key, body); !put) {
        if (put.error().kind == ErrorKind::remote_forbidden) {
            std::lock_guard lock(mutex_);
            forbidden_ = true;
        }
        return fault(u.id, put.error(), Direction::upload);
    }
    std::lock_guard lock(mutex_);
    ++tally_.uploaded;
    if (replacing)
        ++tally_.replaced;
}

void RemoteShare::finish()
{
    std::vector<std::thread> threads;
    {
        std::unique_lock lock(mutex_);
        stop_prefetching_locked();
        idle_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
        stopping_ = true;
        wake_.notify_all();
        threads.swap(uploaders_);
        for (std::thread& t : prefetchers_)
            threads.push_back(std::move(t));
        prefetchers_.clear();
    }
    for (std::thread& t : threads)
        t.join();
}

RemoteTally RemoteShare::tally() const
{
    std::lock_guard lock(mutex_);
    return tally_;
}

}  // namespace qk::run
