// LocalCache: opening the cache, naming build directories, finding and checking entries. Storing is in
// cache_store.cpp, restoring in cache_restore.cpp.
#include "qk/key/cache.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <mutex>

#include <fmt/format.h>

#include "cache_fs.hpp"
#include "cache_meta.hpp"
#include "cache_packed.hpp"
#include "entry_check.hpp"
#include "fresh_entries.hpp"

namespace qk::key {

namespace {

// Shared by every LocalCache of the process, so no two builds ever pick the same directory name.
std::atomic<std::uint64_t> next_tmp{0};

// A build directory is "<32 hex>.<pid>.<n>": the pid, or 0 for a name of another form.
pid_t tmp_owner(std::string_view name)
{
    if (name.size() < 36 || name[32] != '.')
        return 0;
    std::string_view rest = name.substr(33);
    auto dot = rest.find('.');
    if (dot == std::string_view::npos)
        return 0;
    pid_t pid = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, pid);
    return ec == std::errc() && end == rest.data() + dot && pid > 0 ? pid : 0;
}

bool alive(pid_t pid)
{
    return ::kill(pid, 0) == 0 || errno == EPERM;
}

// Removes the build directories of processes that died mid-store: not entries, only litter.
void remove_dead_builds(int tmp_fd)
{
    UniqueFd list(::openat(tmp_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    DIR* dir = list.valid() ? ::fdopendir(list.get()) : nullptr;
    if (!dir)
        return;
    list.release();
    std::vector<std::string> dead;
    while (dirent* e = ::readdir(dir)) {
        pid_t pid = tmp_owner(e->d_name);
        if (pid > 0 && pid != ::getpid() && !alive(pid))
            dead.emplace_back(e->d_name);
    }
    for (const std::string& name : dead)
        (void)cache_fs::remove_tree(::dirfd(dir), name, name);  // best effort: the next open tries again
    ::closedir(dir);
}

Result<UniqueFd> make_dir(int at, const char* name, const std::filesystem::path& display, bool* created = nullptr)
{
    if (::mkdirat(at, name, 0777) == 0) {
        if (created)
            *created = true;
    } else if (errno != EEXIST) {
        return sys_error(fmt::format("cannot create {}", display.string()));
    }
    UniqueFd fd(::openat(at, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid())
        return sys_error(fmt::format("cannot open {}; remove it if it is not a directory", display.string()));
    return fd;
}

}  // namespace

struct LocalCache::Refused {
    std::mutex mutex;
    std::vector<Refusal> list;
};

LocalCache::LocalCache(std::filesystem::path root, std::filesystem::path dir, UniqueFd root_fd, UniqueFd dir_fd)
    : root_(std::move(root)), dir_(std::move(dir)), root_fd_(std::move(root_fd)), dir_fd_(std::move(dir_fd)),
      refused_(std::make_shared<Refused>())
{
}

std::vector<LocalCache::Refusal> LocalCache::refused() const
{
    std::lock_guard lock(refused_->mutex);
    return refused_->list;
}

void LocalCache::note_refused(const std::string& task, const std::string& why) const
{
    std::lock_guard lock(refused_->mutex);
    refused_->list.push_back({task, why});
}

Result<LocalCache> LocalCache::open(const std::filesystem::path& workspace_root)
{
    UniqueFd root_fd(::open(workspace_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root_fd.valid())
        return sys_error(fmt::format("cannot open the workspace root {}", workspace_root.string()));
    bool created = false;
    QK_TRY(qk, make_dir(root_fd.get(), ".qk", workspace_root / ".qk", &created));
    // qk's state never belongs in Git; only the process that made .qk writes this, so a user's edit stays.
    if (created) {
        Status s = cache_fs::write_file_at(qk->get(), ".gitignore", "*\n", 0644);
        if (!s && s.error().sys_errno != EEXIST)
            return error(
                fmt::format("cannot write {}: {}", (workspace_root / ".qk/.gitignore").string(), s.error().message));
    }
    std::filesystem::path dir = directory(workspace_root);
    QK_TRY(cache, make_dir(qk->get(), "cache", dir));
    QK_TRY(tmp, make_dir(cache->get(), "tmp", dir / "tmp"));
    remove_dead_builds(tmp->get());
    return LocalCache(workspace_root, std::move(dir), std::move(root_fd), std::move(*cache));
}

std::string LocalCache::tmp_name(const std::string& hex) const
{
    return fmt::format("tmp/{}.{}.{}", hex, ::getpid(), next_tmp.fetch_add(1));
}

void LocalCache::remove_entry(const std::string& hex) const
{
    fresh::forget(hex);
    // Renamed aside first, so `<hex>` is gone at once and a store racing with us can put a good entry there.
    std::string aside = tmp_name(hex);
    if (::renameat(dir_fd_.get(), hex.c_str(), dir_fd_.get(), aside.c_str()) != 0)
        aside = hex;
    (void)cache_fs::remove_tree(dir_fd_.get(), aside, aside);
}

Result<std::optional<CacheHit>> LocalCache::find(const Hash128& hash, std::string* miss_reason) const
{
    const std::string hex = hash.hex();
    // A directory (stored here) or a packed entry (imported); O_NONBLOCK: a FIFO put there must not hang us.
    UniqueFd entry(::openat(dir_fd_.get(), hex.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!entry.valid() && errno == ENOENT)
        return std::optional<CacheHit>();
    auto unusable = [&](std::string why) -> Result<std::optional<CacheHit>> {
        entry.reset();
        remove_entry(hex);
        if (miss_reason)
            *miss_reason = fmt::format("{}: {}", (dir_ / hex).string(), why);
        return std::optional<CacheHit>();
    };
    if (!entry.valid())
        return errno == ELOOP ? unusable("it is a symbolic link") : unusable(sys_error("cannot open it").message);
    struct stat kind;
    if (::fstat(entry.get(), &kind) != 0)
        return unusable(sys_error("cannot stat it").message);
    if (S_ISREG(kind.st_mode)) {
        // Imported by this process and still the file it put there: what its import checked.
        if (auto kept = fresh::find(hex, kind))
            return std::optional<CacheHit>(std::move(kept->hit));
        auto packed = packed::read_head(entry.get(), hash);
        if (!packed)
            return unusable(packed.error().message);
        return std::optional<CacheHit>(std::move(*packed));
    }
    if (!S_ISDIR(kind.st_mode))
        return unusable("it is neither a directory nor a packed entry");
    auto text = cache_fs::read_file_at(entry.get(), "meta.json");
    if (!text)
        return unusable(text.error().sys_errno == ENOENT ? "meta.json is missing: a store was interrupted"
                                                         : text.error().message);
    auto parsed = cache_meta::read(*text, hash);
    if (!parsed)
        return unusable(parsed.error().message);
    CacheHit& hit = parsed->hit;
    auto outputs = OutputSet::compile(hit.outputs);
    if (!outputs)
        return unusable(outputs.error().message);

    auto terminal = cache_fs::read_file_at(entry.get(), "terminal.log");
    if (!terminal)
        return unusable(terminal.error().message);
    if (terminal->size() != parsed->terminal_size)
        return unusable(
            fmt::format("terminal.log has {} bytes, meta.json says {}", terminal->size(), parsed->terminal_size));
    hit.terminal_output = std::move(*terminal);
    // Optional: entries stored without provenance, and by a qk before it, have none.
    auto provenance = cache_fs::read_file_at(entry.get(), "provenance.json");
    if (!provenance && provenance.error().sys_errno != ENOENT)
        return unusable(provenance.error().message);
    if (provenance)
        hit.provenance = std::move(*provenance);

    UniqueFd files(::openat(entry.get(), "files", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!files.valid())
        return unusable(sys_error("cannot open files/").message);
    for (const CachedFile& f : hit.files) {
        // The list says where restore writes: it must be an output, however meta.json came to be.
        if (!outputs->contains(f.path))
            return unusable(fmt::format("it lists {}, which its outputs do not name", f.path));
        struct stat st;
        if (::fstatat(files.get(), f.path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
            return unusable(fmt::format("files/{} is listed in meta.json but missing", f.path));
        bool kind_ok = f.kind == OutputFile::Kind::file      ? S_ISREG(st.st_mode)
                       : f.kind == OutputFile::Kind::symlink ? S_ISLNK(st.st_mode)
                                                             : S_ISDIR(st.st_mode);
        if (!kind_ok)
            return unusable(fmt::format("files/{} is not the kind meta.json says", f.path));
        if (f.kind != OutputFile::Kind::directory && static_cast<std::uint64_t>(st.st_size) != f.size)
            return unusable(fmt::format("files/{} has {} bytes, meta.json says {}", f.path, st.st_size, f.size));
        // Stored before qk refused them, or written by hand: what no entry may restore.
        std::optional<std::string> why = f.kind == OutputFile::Kind::symlink
                                             ? entry_check::link_refused(*outputs, f.path, f.target)
                                             : entry_check::mode_refused(f);
        if (why)
            return unusable(*why);
    }
    return std::optional<CacheHit>(std::move(hit));
}

}  // namespace qk::key
