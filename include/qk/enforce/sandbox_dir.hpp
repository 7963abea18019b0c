// SandboxDir: one run's directory outside the workspace for its commands' overlay upper and work
// directories, held by a lock for the run's life and removed with everything in it at the end.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce {

class SandboxDir {
public:
    // Where a run directory may go. `chosen` (QK_SANDBOX_DIR) is the only choice when set; otherwise the
    // first `candidates` entry outside the workspace, usable, and on the workspace's filesystem, else
    // the first usable one.
    struct Bases {
        std::optional<std::filesystem::path> chosen;
        std::vector<std::filesystem::path> candidates;
    };
    // QK_SANDBOX_DIR; else XDG_CACHE_HOME/qk/sandbox (or HOME/.cache/qk/sandbox),
    // /var/tmp/qk-sandbox-<uid>, <workspace parent>/.qk-sandbox-<uid>.
    static Bases bases(const SandboxSettings& settings, const std::filesystem::path& workspace_root);

    // Makes this run's directory, first removing the run directories of runs that were killed (whose
    // lock nobody holds); removed() lists them. Safe with other runs, in this workspace or another,
    // creating or removing theirs at the same time.
    static Result<SandboxDir> create(const std::filesystem::path& workspace_root, const Bases& bases);

    SandboxDir(SandboxDir&&) noexcept = default;
    SandboxDir& operator=(SandboxDir&& other) noexcept;
    SandboxDir(const SandboxDir&) = delete;
    SandboxDir& operator=(const SandboxDir&) = delete;
    // Renames the run directory a finished run's (done-XXXXXX) in one step, with what it still holds (the
    // janitor's work left undone: the last layers, what they replaced), for the next run to claim and free
    // off its path (remove_left_by_finished_runs); where it cannot, removes it, never following a link.
    ~SandboxDir();

    const std::filesystem::path& base() const { return base_; }
    const std::filesystem::path& run_dir() const { return run_dir_; }
    // False when no usable base was on the workspace's filesystem: apply then copies instead of renaming.
    bool same_filesystem() const { return same_filesystem_; }
    // Run directories left by interrupted runs that create() removed.
    const std::vector<std::filesystem::path>& removed() const { return removed_; }
    // Frees what finished runs left (create() claimed it, moving it into this run's directory): slow on
    // some filesystems, so from a thread off the run's path; what it cannot free goes on to the next run.
    // Asks `stop` between entries.
    void remove_left_by_finished_runs(const std::function<bool()>& stop) const;

    // Fresh, empty directories (mode 0700) for one command's overlay, the trash apply() moves what
    // it replaces into, and where qk-sandbox-exec mounts the tmpfs it builds a read mask in (an empty
    // directory on disk, whatever the command did); thread-safe.
    struct CommandDirs {
        std::filesystem::path upper;
        std::filesystem::path work;
        std::filesystem::path trash;
        std::filesystem::path mask;  // the run's, shared: each helper mounts its mask there in its own namespace
    };
    Result<CommandDirs> command_dirs() const;
    // As root, puts the run directory out of every command's reach (commands of this run and of any
    // other, whatever directory holds theirs), once the probe, which works in it from inside a user
    // namespace, is done. Only where the overlay's layers are mounted as the host's root.
    Status hide_from_commands() const;
    // Whether hide_from_commands() can: as root, with CAP_SYS_ADMIN. Otherwise every command runs as the
    // owner of every run directory of its user, and only covers keep them apart (BaseRegistry).
    static bool can_hide_from_commands();
    // Removes what command_dirs() made, once its upper has been applied: the slow part of replacing many
    // outputs (freeing what they replaced), so call it off the critical path (it is thread-safe).
    Status remove(const CommandDirs& dirs) const;

private:
    SandboxDir() = default;
    void destroy() noexcept;

    std::filesystem::path base_, run_dir_;
    UniqueFd base_fd_, run_fd_, lock_fd_;
    bool same_filesystem_ = true;
    std::vector<std::filesystem::path> removed_;
    std::vector<std::string> claimed_;  // finished runs' leftovers, moved into the run directory
};

}  // namespace qk::enforce
