#include "qk/enforce/sandbox_dir.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "qk/enforce/base_registry.hpp"
#include "qk/enforce/read_mask.hpp"
#include "qk/util/capabilities.hpp"
#include "qk/util/path_within.hpp"
#include "own_directory.hpp"
#include "tree_ops.hpp"

namespace qk::enforce {

namespace fs = std::filesystem;

namespace {

// Runs create and remove run directories under the base's lock, so a run directory is seen either
// without a lock file (its run was killed while making it) or with its run's lock held, never between.
constexpr const char* kBaseLock = ".lock";
constexpr const char* kRunLock = "lock";
constexpr const char* kMaskDir = "mask";  // the mount point of every command's read mask
constexpr std::string_view kRunPrefix = "run-";
constexpr std::string_view kCommandPrefix = "cmd-";
// A finished run's directory holding what its janitor had not freed yet: renamed so in one step at its
// end, and removed by the next run's janitor, off both runs' paths (see destroy()).
constexpr std::string_view kDonePrefix = "done-";

// The device of `p`, or of its nearest existing ancestor: where a directory made there would live.
std::optional<dev_t> device_for(fs::path p)
{
    for (;;) {
        struct stat st;
        if (::stat(p.c_str(), &st) == 0)
            return st.st_dev;
        if (!p.has_relative_path())
            return std::nullopt;
        p = p.parent_path();
    }
}

struct Base {
    fs::path path;
    UniqueFd fd;   // O_PATH
    UniqueFd lock;  // the base lock file, open
    dev_t dev = 0;
};

// Opens `dir` as a base (made if missing): ours, nobody else may write in it, outside the workspace.
Result<Base> open_base(const fs::path& dir, const fs::path& workspace)
{
    std::error_code ec;
    fs::path path = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    if (ec)
        return error(fmt::format("cannot resolve it: {}", ec.message()));
    if (qk::is_within(path.native(), workspace.native()))
        return error("it is inside the workspace");
    QK_TRY(own, open_own_directory(path));
    if (qk::is_within(own->path.native(), workspace.native()))
        return error("it is inside the workspace");
    Base base;
    base.path = std::move(own->path);
    base.fd = std::move(own->fd);
    // Creating the lock file is the test of being able to write there (a read-only mount, a full disk).
    base.lock.reset(::openat(base.fd.get(), kBaseLock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!base.lock.valid())
        return sys_error("cannot write in it");
    base.dev = own->st.st_dev;
    return base;
}

Result<Base> choose_base(const SandboxDir::Bases& bases, const fs::path& workspace, dev_t ws_dev)
{
    if (bases.chosen) {
        auto base = open_base(*bases.chosen, workspace);
        if (!base)
            return error(fmt::format("QK_SANDBOX_DIR={}: {}; set it to a directory outside the workspace that you "
                                     "own and can write in, on the workspace's filesystem if you can",
                                     bases.chosen->string(), base.error().message));
        return base;
    }
    std::vector<std::string> why(bases.candidates.size());
    // Same filesystem first, so outputs move by rename(2); a directory is only made where it would be.
    for (std::size_t i = 0; i < bases.candidates.size(); ++i) {
        if (device_for(bases.candidates[i]) != ws_dev)
            continue;
        auto base = open_base(bases.candidates[i], workspace);
        if (base && base->dev == ws_dev)
            return base;
        why[i] = base ? "not on the workspace's filesystem" : base.error().message;
    }
    for (std::size_t i = 0; i < bases.candidates.size(); ++i) {
        if (!why[i].empty())
            continue;
        auto base = open_base(bases.candidates[i], workspace);
        if (base)
            return base;
        why[i] = base.error().message;
    }
    std::string tried;
    for (std::size_t i = 0; i < bases.candidates.size(); ++i)
        tried += fmt::format("{}{}: {}", tried.empty() ? "" : "; ", bases.candidates[i].string(), why[i]);
    return error(fmt::format("no directory for the sandbox's overlay layers ({}); set QK_SANDBOX_DIR to a directory "
                             "outside the workspace that you own and can write in",
                             tried.empty() ? "no candidates" : tried));
}

// Whether run directory `name` in `base_fd` belongs to a run that is gone: no lock file (killed while
// making it; we hold the base lock, so nobody is making one now), or a lock nobody holds. The lock
// file stays open in `held` while the caller removes the directory.
bool abandoned(int base_fd, const std::string& name, UniqueFd& held)
{
    UniqueFd dir(::openat(base_fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid())
        return false;
    held.reset(::openat(dir.get(), kRunLock, O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    if (!held.valid())
        return errno == ENOENT;
    return ::flock(held.get(), LOCK_EX | LOCK_NB) == 0;
}

}  // namespace

SandboxDir::Bases SandboxDir::bases(const SandboxSettings& settings, const fs::path& workspace_root)
{
    Bases bases;
    if (!settings.dir.empty())
        bases.chosen = fs::path(settings.dir);
    if (!settings.cache_home.empty())
        bases.candidates.push_back(fs::path(settings.cache_home) / "qk" / "sandbox");
    else if (!settings.home.empty())
        bases.candidates.push_back(fs::path(settings.home) / ".cache" / "qk" / "sandbox");
    bases.candidates.push_back(BaseRegistry::home());
    std::error_code ec;
    fs::path root = fs::absolute(workspace_root, ec).lexically_normal();
    if (!ec && root.has_relative_path())
        bases.candidates.push_back(root.parent_path() / ("." + BaseRegistry::home().filename().string()));
    return bases;
}

Result<SandboxDir> SandboxDir::create(const fs::path& workspace_root, const Bases& bases)
{
    std::error_code ec;
    const fs::path workspace = fs::canonical(workspace_root, ec);
    struct stat ws;
    if (ec || ::stat(workspace.c_str(), &ws) != 0)
        return error(fmt::format("cannot resolve workspace root {}: {}", workspace_root.string(),
                                 ec ? ec.message() : std::strerror(errno)));
    auto base = choose_base(bases, workspace, ws.st_dev);
    if (!base)
        return base.error();

    SandboxDir dir;
    dir.base_ = base->path;
    dir.same_filesystem_ = base->dev == ws.st_dev;
    if (::flock(base->lock.get(), LOCK_EX) != 0)
        return sys_error(fmt::format("cannot lock {}/{}", base->path.string(), kBaseLock));
    auto entries = tree::list_dir(base->fd.get());
    if (!entries)
        return sys_error(fmt::format("cannot list {}", base->path.string()), entries.error().sys_errno);
    std::vector<std::string> done;
    for (const tree::DirEntry& e : *entries) {
        if (e.name.starts_with(kDonePrefix))
            done.push_back(e.name);
        UniqueFd held;
        if (!e.name.starts_with(kRunPrefix) || !abandoned(base->fd.get(), e.name, held))
            continue;
        // A directory that cannot be removed now stays for a later run to try again.
        if (tree::remove_tree(base->fd.get(), e.name, e.name))
            dir.removed_.push_back(base->path / e.name);
    }
    std::string name;
    for (int attempt = 0;; ++attempt) {
        name = tree::random_name(kRunPrefix);
        if (::mkdirat(base->fd.get(), name.c_str(), 0700) == 0)
            break;
        if (errno != EEXIST || attempt == 100)
            return sys_error(fmt::format("cannot create a run directory in {}", base->path.string()));
    }
    dir.run_dir_ = base->path / name;
    dir.run_fd_.reset(::openat(base->fd.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.run_fd_.valid())
        dir.lock_fd_.reset(
            ::openat(dir.run_fd_.get(), kRunLock, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    // One mount point for every command's read mask: each helper mounts its tmpfs there in a mount
    // namespace of its own, so commands side by side share it, and no command makes and frees a
    // directory for it (on ext4 mounted with discard, each costs a block freed).
    if (!dir.lock_fd_.valid() || ::flock(dir.lock_fd_.get(), LOCK_EX | LOCK_NB) != 0 ||
        ::mkdirat(dir.run_fd_.get(), kMaskDir, 0700) != 0) {
        const int err = errno;
        (void)tree::remove_tree(base->fd.get(), name, name);
        return sys_error(fmt::format("cannot create and lock {}/{} and make its {}", dir.run_dir_.string(), kRunLock,
                                     kMaskDir),
                         err);
    }
    // Finished runs' leftovers become this run's, under the base lock so no other run claims them too: its
    // janitor frees them (remove_left_by_finished_runs), and if it cannot before this run ends they go on
    // to the next with this run's own.
    for (const std::string& name : done)
        if (::renameat(base->fd.get(), name.c_str(), dir.run_fd_.get(), name.c_str()) == 0)
            dir.claimed_.push_back(name);
    dir.base_fd_ = std::move(base->fd);
    ::flock(base->lock.get(), LOCK_UN);  // explicit: a forked child may hold a duplicate of the descriptor
    return dir;
}

SandboxDir& SandboxDir::operator=(SandboxDir&& other) noexcept
{
    if (this != &other) {
        destroy();
        base_ = std::move(other.base_);
        run_dir_ = std::move(other.run_dir_);
        base_fd_ = std::move(other.base_fd_);
        run_fd_ = std::move(other.run_fd_);
        lock_fd_ = std::move(other.lock_fd_);
        same_filesystem_ = other.same_filesystem_;
        removed_ = std::move(other.removed_);
        claimed_ = std::move(other.claimed_);
    }
    return *this;
}

SandboxDir::~SandboxDir()
{
    destroy();
}

void SandboxDir::destroy() noexcept
{
    if (!run_fd_.valid())
        return;
    // Renamed a finished run's in one step under the base lock, with what it still holds (command
    // directories the janitor had not freed: the last task's layers, what its outputs replaced; the masks'
    // mount point; the lock file), for the next run to claim and free off its path: on ext4 with discard
    // each unlink or rmdir can wait milliseconds for the journal, and removing many files seconds. Where
    // it cannot be renamed it is removed here, the content while our lock keeps other runs away, the lock
    // file and the directory under the base lock, so another run's cleanup never sees the directory
    // without its lock file.
    UniqueFd base_lock(::openat(base_fd_.get(), kBaseLock, O_RDWR | O_NOFOLLOW | O_CLOEXEC));
    if (base_lock.valid() && ::flock(base_lock.get(), LOCK_EX) == 0) {
        bool renamed = false;
        for (int attempt = 0; !renamed && attempt < 100; ++attempt) {
            const std::string done = tree::random_name(kDonePrefix);
            renamed = ::renameat2(base_fd_.get(), run_dir_.filename().c_str(), base_fd_.get(), done.c_str(),
                                  RENAME_NOREPLACE) == 0;
            if (!renamed && errno != EEXIST)
                break;
        }
        if (!renamed) {
            if (auto entries = tree::list_dir(run_fd_.get()))
                for (const tree::DirEntry& e : *entries)
                    if (e.name != kRunLock)
                        (void)tree::remove_tree(run_fd_.get(), e.name, e.name);
            ::unlinkat(run_fd_.get(), kRunLock, 0);
            ::unlinkat(base_fd_.get(), run_dir_.filename().c_str(), AT_REMOVEDIR);
        }
        ::flock(base_lock.get(), LOCK_UN);
    }
    lock_fd_.reset();
    run_fd_.reset();
    base_fd_.reset();
}

Status SandboxDir::hide_from_commands() const
{
    // Every run's upper layers lie in its run directory, wherever its sandbox directory is: a task of
    // another run (another QK_SANDBOX_DIR, another user's default) could find one by its path and write
    // into what this run applies and caches, or rename a command's directory away and put its own in
    // its place. As root, qk mounts the layers as the host's root, and a run directory owned by the one
    // id no command's user namespace maps, mode 0700, is out of reach of every capability a command
    // keeps. Without root a command runs as qk's own user, and covers alone keep runs apart (BaseRegistry).
    if (!can_hide_from_commands())
        return {};
    if (::fchownat(run_fd_.get(), "", kStandInOwner, kStandInOwner, AT_EMPTY_PATH) != 0)
        return sys_error(fmt::format("cannot give {} to the owner no sandbox maps", run_dir_.string()));
    return {};
}

bool SandboxDir::can_hide_from_commands()
{
    return ::geteuid() == 0 && has_capability(CAP_SYS_ADMIN);
}

Result<SandboxDir::CommandDirs> SandboxDir::command_dirs() const
{
    std::string name;
    for (int attempt = 0;; ++attempt) {
        name = tree::random_name(kCommandPrefix);
        if (::mkdirat(run_fd_.get(), name.c_str(), 0700) == 0)
            break;
        if (errno != EEXIST || attempt == 100)
            return sys_error(fmt::format("cannot create a command directory in {}", run_dir_.string()));
    }
    UniqueFd sub(::openat(run_fd_.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    for (const char* part : {"upper", "work", "trash"})
        if (!sub.valid() || ::mkdirat(sub.get(), part, 0700) != 0)
            return sys_error(fmt::format("cannot create {} directory in {}", part, (run_dir_ / name).string()));
    return CommandDirs{run_dir_ / name / "upper", run_dir_ / name / "work", run_dir_ / name / "trash", run_dir_ / kMaskDir};
}

void SandboxDir::remove_left_by_finished_runs(const std::function<bool()>& stop) const
{
    // Entry by entry (a command directory, or a run's leftovers claimed in turn), asking between them
    // whether the run is ending: what is not freed then goes on to the next run with this one's.
    for (const std::string& name : claimed_) {
        UniqueFd done(::openat(run_fd_.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        auto entries = done.valid() ? tree::list_dir(done.get()) : Result<std::vector<tree::DirEntry>>(error(""));
        if (!entries)
            continue;
        for (const tree::DirEntry& e : *entries) {
            if (stop())
                return;
            (void)tree::remove_tree(done.get(), e.name, (run_dir_ / name / e.name).string());
        }
        (void)::unlinkat(run_fd_.get(), name.c_str(), AT_REMOVEDIR);
    }
}

Status SandboxDir::remove(const CommandDirs& dirs) const
{
    const fs::path cmd = dirs.upper.parent_path();
    const std::string name = cmd.filename();
    if (cmd.parent_path() != run_dir_ || !name.starts_with(kCommandPrefix))
        return error(fmt::format("{} is not a command directory of run directory {}", cmd.string(), run_dir_.string()));
    return tree::remove_tree(run_fd_.get(), name, cmd.string());
}

}  // namespace qk::enforce
