// Applying what a sandboxed task changed (read from its upper layer) to the real workspace: what the
// task may write lands, the rest is left in the upper and listed as written outside its outputs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/enforce/upper_layer.hpp"
#include "qk/util/result.hpp"

namespace qk::enforce {

// Whether the task may change workspace path `rel`. `directory_create_or_remove` is true when the
// question is only whether a directory may be created or removed because an output lies in it (a tool
// writing target/release/app makes target; qk's rules allow that though target is no output).
using KeepFn = std::function<bool(std::string_view rel, bool directory_create_or_remove)>;

// Whether the task may leave at workspace path `rel` (one keep() allows) a symbolic link whose target is
// `target`, as the link holds it (never followed). Links that point away (out of the workspace, out of
// where the task may write) are refused: the cache would store and restore them, and a later task, or a
// later run without the sandbox, would write through them.
using LinkFn = std::function<bool(std::string_view rel, std::string_view target)>;

struct RefusedLink {
    std::string path;    // workspace-relative
    std::string target;  // as the link holds it
    friend bool operator==(const RefusedLink&, const RefusedLink&) = default;
};

struct Discarded {
    std::string path;  // workspace-relative; a directory is listed once, not each entry under it
    ChangeKind kind;
    friend bool operator==(const Discarded&, const Discarded&) = default;
};

struct ApplyResult {
    std::size_t applied = 0;  // entries of `changes` that took effect (a directory moved whole counts
                             // with everything listed under it)
    std::vector<Discarded> discarded;
    // Links within what keep() allows that `may_link` refused: left in the upper, not applied. Unlike a
    // discarded write, a refusal: the task's result must not be cached.
    std::vector<RefusedLink> refused_links;
};

// Applies `changes` (from read_upper_layer of the same upper and workspace) where keep() says so.
// Entries move out of the upper by rename(2), or, across filesystems, by a copy made under a temporary
// name beside the target and renamed into place, so no path ever shows half a file. Every workspace
// parent is opened with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS: nothing is written through a link, and
// a link standing where a kept entry needs a directory is replaced by one. user.overlay.* and
// trusted.overlay.* xattrs are removed from everything applied.
//
// A directory change kept whole is one rename (over anything already there, an atomic exchange). When
// only part of it is kept, the workspace directory is emptied of what the task removed and may remove,
// then the kept entries beneath it are applied one by one.
//
// On error apply stops and says where. What it applied before stays applied, the entry it failed on is
// either wholly in place or wholly still in the upper, and the rest is still in the upper: the
// workspace then holds part of the task's outputs, so the task must count as failed and not be cached.
//
// `may_link`, when given, is asked of every symbolic link keep() allows (a directory holding one is then
// applied entry by entry); a link it refuses is listed in refused_links and not applied.
//
// `trash_dir` (SandboxDir::CommandDirs::trash), on the workspace's filesystem, receives what applied
// entries replace and what removals take out of the workspace, by rename: deleting thousands of files
// can take seconds (ext4 with online discard: about 3 ms a file), which belongs off the task's critical
// path, where SandboxDir::remove() or the run's end pays it. Without one, they are deleted at once.
Result<ApplyResult> apply(const std::filesystem::path& upper_dir, const std::filesystem::path& workspace_root,
                          const std::vector<Change>& changes, const KeepFn& keep,
                          const std::filesystem::path& trash_dir = {}, const LinkFn& may_link = nullptr);
Result<ApplyResult> apply(int upper_fd, int workspace_fd, const std::vector<Change>& changes, const KeepFn& keep,
                          int trash_fd = -1, const LinkFn& may_link = nullptr);

}  // namespace qk::enforce
