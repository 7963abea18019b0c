// FileIndex's hashing: on demand, in parallel, shared by concurrent callers, backed by the persistent
// cache. A file is stat'ed before it is read, so a change during the read leaves a stamp that no
// longer matches and the next run hashes it again. Any error is the file's, with errno kept: the
// message says it was removed when that is why.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "file_index_hashing.hpp"
#include "file_index_reader.hpp"

namespace qk::key {

namespace {

// A batch this small is hashed by the calling thread: starting threads would cost more.
constexpr std::size_t files_per_worker = 64;
// Workers take consecutive files in chunks, so that files of one directory mostly go to one reader.
constexpr std::size_t chunk = 32;

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

void FileIndex::Hashing::adopt(const HashCacheFile& cache, const std::vector<std::string>& files)
{
    dirty = cache.present && !cache.usable;  // rewrite what could not be read
    auto less = [](const std::string& f, std::string_view p) { return std::string_view(f) < p; };
    // Both lists are sorted when qk wrote the cache: a merge, with a search only when that fails.
    std::size_t cursor = 0;
    for (const auto& e : cache.entries) {
        std::string_view path = cache.path(e);
        if (cursor >= files.size() || files[cursor] != path)
            cursor = static_cast<std::size_t>(std::lower_bound(files.begin(), files.end(), path, less) - files.begin());
        if (cursor < files.size() && files[cursor] == path)
            known[cursor++] = e.cached;
        else
            elsewhere_read.emplace(std::string(path), e.cached);  // an output, or a file that is gone
    }
}

void FileIndex::Hashing::hash_claimed(const std::vector<std::string>& files, const std::filesystem::path& root,
                                      std::span<const std::uint32_t> mine, std::span<Outcome> out) const
{
    auto failure = [&](const std::string& path, const Error& e) {
        if (e.sys_errno == ENOENT || e.sys_errno == ENOTDIR)
            return error(fmt::format("cannot hash {}: it was removed after qk listed the workspace's files (in {}); "
                                     "something deleted it while qk ran, so the key of a task reading it cannot be "
                                     "computed: run again",
                                     path, root.string()));
        return error(fmt::format("cannot hash {} in the workspace {}: {}", path, root.string(), e.message));
    };
    auto one = [&](FileReader& reader, std::uint32_t f, Outcome& o) {
        const std::string& path = files[f];
        struct stat st;
        if (Status s = reader.stat(path, st); !s) {
            o.failure = failure(path, s.error());
            return;
        }
        o.stamp = FileStamp::of(st);
        const CachedHash& cached = known[f];
        if (cached.valid && cached.stamp == o.stamp) {
            o.hash = cached.hash;
            return;
        }
        o.fresh = true;
        if (Result<Hash128> r = reader.hash(path, st))
            o.hash = *r;
        else
            o.failure = failure(path, r.error());
    };

    // Asked once: glibc reads /sys/devices/system/cpu/online each time, and a run hashes per task.
    static const std::size_t want = std::max(1u, std::thread::hardware_concurrency());
    std::size_t workers = std::min(want, (mine.size() + files_per_worker - 1) / files_per_worker);
    std::atomic<std::size_t> next{0};
    auto work = [&] {
        FileReader reader(root_fd.get(), root);
        for (std::size_t first; (first = next.fetch_add(chunk, std::memory_order_relaxed)) < mine.size();)
            for (std::size_t i = first; i < std::min(first + chunk, mine.size()); ++i)
                one(reader, mine[i], out[i]);
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

void FileIndex::Hashing::require_hashed(const std::vector<std::string>& files, std::size_t file, const char* what) const
{
    // A key built from an unhashed file would be silently wrong: a caller's bug, reported loudly.
    if (file >= files.size() || state[file].load(std::memory_order_acquire) != hashed)
        throw FatalError(fmt::format("internal error: {} {} was asked for before hash() covered it", what,
                                     file < files.size() ? files[file] : fmt::format("file #{}", file)));
}

Hash128 FileIndex::hash_of(std::size_t file) const
{
    hashing_->require_hashed(files_, file, "the hash of");
    return hashing_->hashes[file];
}

bool FileIndex::is_symlink(std::size_t file) const
{
    hashing_->require_hashed(files_, file, "the type of");
    // The stamp taken as the file was hashed (whether its hash was read or reused); a hashed file's
    // entry is never written again.
    return S_ISLNK(hashing_->known[file].stamp.mode);
}

std::optional<FileIndex::Change> FileIndex::changed_since_hashed(
    std::span<const std::uint32_t> files, const std::function<bool(std::string_view)>& may_rewrite) const
{
    FileReader reader(hashing_->root_fd.get(), root_);
    for (std::uint32_t f : files) {
        if (hashing_->state[f].load(std::memory_order_acquire) != Hashing::hashed)
            continue;  // not hashed by this run: no key holds its hash
        const std::string& path = files_[f];
        struct stat st {};
        if (!reader.stat(path, st))
            return Change{path, Change::Kind::removed};
        // The stamp was taken as the key read the file (hash_claimed), from the same lstat: no second one.
        if (FileStamp::of(st) == hashing_->known[f].stamp)
            continue;
        auto now = reader.hash(path, st);
        if (!now || *now != hashing_->hashes[f])
            return Change{path, Change::Kind::content};
        // The same bytes under a new stamp: ctime moves on every write, chmod, link or utimensat, so a
        // file edited and put back (mtime too, with `touch -r`) shows here. The task may have read it in
        // between; only a file it may write itself is judged by its content.
        if (!may_rewrite || !may_rewrite(path))
            return Change{path, Change::Kind::rewritten};
    }
    return std::nullopt;
}

FileIndex::HashCounts FileIndex::hash_counts() const
{
    std::lock_guard lock(hashing_->mutex);
    return hashing_->counts;
}

Result<Hash128> FileIndex::hash_elsewhere(std::string_view path, const struct stat& st)
{
    Hashing& h = *hashing_;
    FileStamp stamp = FileStamp::of(st);
    {
        std::lock_guard lock(h.mutex);
        for (auto* map : {&h.elsewhere_used, &h.elsewhere_read})
            if (auto it = map->find(path); it != map->end() && it->second.valid && it->second.stamp == stamp) {
                if (map == &h.elsewhere_read)
                    h.elsewhere_used.insert_or_assign(std::string(path), it->second);
                ++h.counts.reused;
                return it->second.hash;
            }
    }
    // Read through the root's descriptor, as the index's files are; a regular file only.
    UniqueFd fd(::openat(h.root_fd.get(), std::string(path).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid())
        return sys_error(fmt::format("cannot read {}", path));
    QK_TRY(hash, hash_fd(fd.get(), path));
    // Kept only for the file the caller looked at: one swapped in since must not lend it its hash.
    struct stat opened {};
    bool same = ::fstat(fd.get(), &opened) == 0 && FileStamp::of(opened) == stamp;
    std::lock_guard lock(h.mutex);
    ++h.counts.read;
    if (same) {
        h.elsewhere_used.insert_or_assign(std::string(path), CachedHash{stamp, *hash, true});
        h.dirty = true;
    }
    return *hash;
}

Status FileIndex::save_hash_cache(bool end_of_run)
{
    Hashing& h = *hashing_;
    std::lock_guard lock(h.mutex);
    // At the end of a run, what the cache held outside the index and the run did not use goes (an
    // output gone, or of a task not run); before, it is kept for the tasks still to come.
    if (end_of_run)
        for (const auto& [path, cached] : h.elsewhere_read)
            if (!h.elsewhere_used.count(path))
                h.dirty = true;
    if (!h.dirty)
        return {};
    std::vector<HashCacheEntry> entries;
    for (std::size_t i = 0; i < files_.size(); ++i)
        if (h.known[i].valid)
            entries.push_back({files_[i], &h.known[i]});
    for (const auto& [path, cached] : h.elsewhere_used)
        entries.push_back({path, &cached});
    if (!end_of_run)
        for (const auto& [path, cached] : h.elsewhere_read)
            if (!h.elsewhere_used.count(path))
                entries.push_back({path, &cached});
    // Sorted by path, as readers merge on it.
    std::sort(entries.begin(), entries.end(),
              [](const HashCacheEntry& a, const HashCacheEntry& b) { return a.path < b.path; });
    QK_TRY_STATUS(write_hash_cache(root_, hash_cache_path(root_), entries));
    h.dirty = false;
    return {};
}

}  // namespace qk::key
