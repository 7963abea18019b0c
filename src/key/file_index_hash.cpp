// FileIndex's hashing: on demand, in parallel, shared by concurrent callers, backed by the persistent
// cache. A file is stat'ed before it is read, so a change during the read leaves a stamp that no
// longer matches and the next run hashes it again.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "file_index_hashing.hpp"

namespace qk::key {

namespace {

// A batch this small is hashed by the calling thread: starting threads would cost more.
constexpr std::size_t files_per_worker = 64;

Result<Hash128> hash_link(int root_fd, const std::string& path, std::size_t size_hint)
{
    std::string target(size_hint + 1, '\0');
    for (;;) {
        ssize_t n = ::readlinkat(root_fd, path.c_str(), target.data(), target.size());
        if (n < 0)
            return sys_error("readlink");
        if (static_cast<std::size_t>(n) < target.size()) {
            target.resize(static_cast<std::size_t>(n));
            break;
        }
        target.resize(target.size() * 2);  // the link grew since it was stat'ed
    }
    // Length-prefixed fields under a tag: not the plain content hash of a file holding the same text.
    return Hasher().field("qk:symlink").field(target).digest();
}

}  // namespace

Status FileIndex::hash(std::span<const std::uint32_t> files)
{
    Hashing& h = *hashing_;
    std::vector<std::uint32_t> todo(files.begin(), files.end());
    std::sort(todo.begin(), todo.end());
    todo.erase(std::unique(todo.begin(), todo.end()), todo.end());
    if (!todo.empty() && todo.back() >= files_.size())
        return error(fmt::format("internal error: file index {} is out of range (the index holds {} files)",
                                 todo.back(), files_.size()));

    std::unique_lock lock(h.mutex);
    if (!h.cache_loaded) {
        auto read = read_hash_cache(hash_cache_path(root_), [&](std::string_view path, const CachedHash& c) {
            if (auto i = find(path))
                h.known[*i] = c;
            else
                h.dirty = true;  // a file that is gone (or now ignored): drop it from the cache
        });
        h.dirty |= read.present && !read.usable;
        h.cache_loaded = true;
    }

    std::vector<std::uint32_t> mine;
    std::vector<Hashing::Outcome> out;
    for (;;) {
        mine.clear();
        bool waiting = false;
        std::erase_if(todo, [&](std::uint32_t f) {
            std::uint8_t s = h.state[f].load(std::memory_order_relaxed);
            if (s == Hashing::unhashed) {
                h.state[f].store(Hashing::claimed, std::memory_order_relaxed);
                mine.push_back(f);
            }
            waiting |= s == Hashing::claimed;
            return s == Hashing::hashed;
        });
        if (mine.empty()) {
            if (!waiting)
                return {};
            // Another caller is hashing some of ours; if it fails, they come back unhashed and this
            // caller tries them itself, to report its own error.
            h.published.wait(lock);
            continue;
        }
        lock.unlock();
        out.assign(mine.size(), Hashing::Outcome{});
        h.hash_claimed(files_, root_, mine, out);
        lock.lock();

        const Error* failure = nullptr;
        for (std::size_t i = 0; i < mine.size(); ++i) {
            std::uint32_t f = mine[i];
            if (out[i].failure) {
                h.state[f].store(Hashing::unhashed, std::memory_order_relaxed);
                if (!failure)
                    failure = &*out[i].failure;
                continue;
            }
            h.hashes[f] = out[i].hash;
            h.known[f] = CachedHash{out[i].stamp, out[i].hash, true};
            h.dirty |= out[i].fresh;
            ++(out[i].fresh ? h.counts.read : h.counts.reused);
            h.state[f].store(Hashing::hashed, std::memory_order_release);
        }
        h.published.notify_all();
        if (failure)
            return *failure;
    }
}

void FileIndex::Hashing::hash_claimed(const std::vector<std::string>& files, const std::filesystem::path& root,
                                     std::span<const std::uint32_t> mine, std::span<Outcome> out) const
{
    auto removed = [&](const std::string& path) {
        return error(fmt::format("cannot hash {}: it was removed after qk listed the workspace's files (in {}); "
                                 "something deleted it while qk ran, so the key of a task reading it cannot be "
                                 "computed: run again",
                                 path, root.string()));
    };
    auto one = [&](std::uint32_t f, Outcome& o) {
        const std::string& path = files[f];
        struct stat st;
        if (::fstatat(root_fd.get(), path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            int err = errno;
            o.failure = err == ENOENT || err == ENOTDIR
                            ? removed(path)
                            : sys_error(fmt::format("cannot hash {} in the workspace {}", path, root.string()), err);
            return;
        }
        o.stamp = FileStamp::of(st);
        const CachedHash& cached = known[f];
        if (cached.valid && cached.stamp == o.stamp) {
            o.hash = cached.hash;
            return;
        }
        o.fresh = true;
        Result<Hash128> r = S_ISLNK(st.st_mode)   ? hash_link(root_fd.get(), path, static_cast<std::size_t>(st.st_size))
                            : S_ISREG(st.st_mode) ? hash_file(root / path)
                                                  : Result<Hash128>(error("it is no longer a regular file or a symbolic link"));
        if (r)
            o.hash = *r;
        else if (r.error().sys_errno == ENOENT)
            o.failure = removed(path);
        else
            o.failure = error(fmt::format("cannot hash {} in the workspace {}: {}", path, root.string(), r.error().message));
    };

    std::size_t want = std::max(1u, std::thread::hardware_concurrency());
    std::size_t workers = std::min(want, (mine.size() + files_per_worker - 1) / files_per_worker);
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < mine.size();)
            one(mine[i], out[i]);
    };
    std::vector<std::thread> threads;
    for (std::size_t w = 1; w < workers; ++w) {
        try {
            threads.emplace_back(work);
        } catch (const std::system_error&) {
            break;  // no more threads to be had: the ones running (and this one) finish the batch
        }
    }
    work();
    for (auto& t : threads)
        t.join();
}

Hash128 FileIndex::hash_of(std::size_t file) const
{
    // A key built from an unhashed file would be silently wrong: a caller's bug, reported loudly.
    if (file >= files_.size() || hashing_->state[file].load(std::memory_order_acquire) != Hashing::hashed)
        throw FatalError(fmt::format("internal error: the hash of {} was asked for before hash() covered it",
                                     file < files_.size() ? files_[file] : fmt::format("file #{}", file)));
    return hashing_->hashes[file];
}

FileIndex::HashCounts FileIndex::hash_counts() const
{
    std::lock_guard lock(hashing_->mutex);
    return hashing_->counts;
}

Status FileIndex::save_hash_cache()
{
    Hashing& h = *hashing_;
    std::lock_guard lock(h.mutex);
    if (!h.dirty)
        return {};
    std::vector<HashCacheEntry> entries;
    for (std::size_t i = 0; i < files_.size(); ++i)
        if (h.known[i].valid)
            entries.push_back({files_[i], &h.known[i]});
    if (Status s = write_hash_cache(root_, hash_cache_path(root_), entries); !s)
        return s;
    h.dirty = false;
    return {};
}

}  // namespace qk::key
