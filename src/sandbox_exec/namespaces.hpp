// The command's own user, mount and pid namespaces, and the overlay of the workspace in them: the
// first steps of an overlay-mode sandbox, taken in the forced order (research: landlock-overlay.md §0).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qk/enforce/read_mask.hpp"
#include "qk/util/unique_fd.hpp"
#include "setup_error.hpp"

namespace qk::sandbox_exec {

// unshare(user | mount | pid): the caller's uid and gid mapped, unchanged inside (root: every id, mapped
// by a child outside); the mount tree made private, so nothing mounted here reaches the caller's namespace. The
// caller's next child is pid 1 of the new pid namespace. `net_namespace`: a network namespace too
// (network.hpp brings its loopback up).
Step enter_namespaces(bool pid_namespace, bool net_namespace = false);

// unshare(mount) alone, the tree made private: where root builds the read mask before enter_namespaces,
// so that the stand-ins' owner can be the id the user namespace leaves unmapped (a tmpfs mounted inside
// a user namespace can hold only ids it maps).
Step enter_mount_namespace();

// Root: forks a child into a new user namespace (and the other namespaces `namespaces` names, CLONE_NEW*)
// and maps every id of it but kStandInOwner from here, outside it, where root holds CAP_SETUID: one
// process fewer than unshare and a child that writes the maps (enter_namespaces), and a CLONE_NEWPID
// child is pid 1 at once. The child goes on only once mapped, so nothing of it runs as an unmapped id.
// As fork: `pid` is the child's to the parent, 0 to the child; on an error (to the parent) no child is
// left. The child is made by the raw clone system call: glibc's cached thread id in it is still the
// parent's, so it must not call raise, abort or pthread functions (it execs or _exits).
Step fork_mapped_as_root(int namespaces, pid_t& pid);

// Under Landlock alone, root's command keeps the file capabilities a tool needs (CAP_DAC_OVERRIDE ...),
// which would reach every run's sandbox directory, owned by kStandInOwner: a user namespace of its own
// mapping every id but that one (no mounts, no pid namespace) leaves them all out of its reach.
Step enter_user_namespace_as_root();

struct OverlaySpec {
    std::string root;                 // the workspace, lower layer and mount point at once
    std::string upper, work;
    // When set: an empty directory where a tmpfs is mounted and the read mask built (read_mask.hpp),
    // leaving in view `visible` (and the binds) less `hidden`; it is the lower layer above the workspace.
    std::string mask;
    bool mask_built = false;  // built already, before the user namespace (root)
    // Root: the overlay is mounted by the host's root, before the user namespace (trusted.* xattrs), with
    // `mirror` (the run's, read_mask.hpp) as a layer above the workspace when set, redirects followed.
    bool host_root = false;
    std::string mirror;
    std::vector<std::string> visible, hidden;
    std::vector<std::string> binds;   // workspace-relative, bound through from the real workspace
    std::vector<std::string> make_dirs;  // workspace-relative, made on the merged tree (parents first)
    // qk's machinery (SandboxPlan::cover, read_only): covered and made read-only last.
    std::vector<std::string> read_only, cover;
    std::string tmpdir;  // bound back in when a cover hides it

    // What the mask leaves readable: the grants, and what is bound through (the binds cover it).
    std::vector<std::string> mask_visible() const
    {
        std::vector<std::string> out = visible;
        out.insert(out.end(), binds.begin(), binds.end());
        return out;
    }
};

struct OverlayLayers {
    std::string lower, upper, work, target;
    std::string mask;    // when set, a lower layer above `lower`
    std::string mirror;  // when set, a layer between the mask and `lower`, which the mask's redirects lead into
    bool host_root = false;
};
// An overlay with the options every enforce mount uses (index=off, metacopy=off; redirect_dir=nofollow, or
// follow over a mirror; userxattr unless mounted by the host's root), by the mount API (fsopen,
// "lowerdir+": one path, no separators) or mount(2) before 6.8.
Step mount_overlay_layers(const OverlayLayers& layers);

// Mounts the overlay on the workspace's own path (so every path a tool knows stays the same), binds
// the pass-through directories on top from the real workspace (cloned before the overlay hides it), and
// makes the directories asked for. Afterwards the workspace path leads to the merged tree.
Step mount_overlay(const OverlaySpec& spec);

// Read-only binds of spec.read_only on the merged tree, and an empty read-only tmpfs on each of
// spec.cover (the command's temporary directory bound back in): the last mounts, once the overlay is up.
Step protect_machinery(const OverlaySpec& spec);

// Mounts a tmpfs on `dir` (in this mount namespace) and builds there the read mask of `root` that
// leaves `visible` readable, less `hidden`, its stand-ins owned by `owner` (read_mask.hpp). Nothing is
// left to remove: the tmpfs goes with the namespace.
Step build_mask_on_tmpfs(const std::string& dir, const std::string& root, const std::vector<std::string>& visible,
                         const std::vector<std::string>& hidden, std::optional<enforce::StandInOwner> owner,
                         const std::string& mirror = {});

// Opens `rel` beneath `root_fd` refusing every link on the way and the last component too (O_PATH).
UniqueFd open_beneath(int root_fd, const std::string& rel);

}  // namespace qk::sandbox_exec
