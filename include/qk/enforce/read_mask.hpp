// ReadMask: the overlay layer laid between a task's upper layer and the workspace under
// --sandbox=enforce, which puts an unreadable stand-in where the workspace holds a file the task may not
// read. The task sees the workspace as it is (every name listed, stat answering with the file's size and
// times), opening a refused file fails with EACCES, and Landlock can allow the workspace whole, so what
// the task creates anywhere (vite's config.timestamp file beside its config, vitest's coverage/.tmp in a
// directory it made again) is its own to read back. docs/architecture.md, "Enforce", says why.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::enforce {

// The owner of every stand-in when qk runs as root: the one id that the sandbox's user namespace leaves
// unmapped (it maps 0..4294967293), so no capability the task holds there reaches it (capabilities over a
// file need its owner mapped) and its mode 000 refuses the task as it refuses anyone.
inline constexpr uid_t kStandInOwner = 4294967294u;

struct ReadMaskCounts {
    std::size_t stand_ins = 0;     // files the task may not read: unreadable stand-ins (mode 000) in their place
    std::size_t refused_dirs = 0;  // directories of which nothing may be read: mirrored whole, opaque, of stand-ins
    std::size_t kept_dirs = 0;     // directories partly readable, merged with the workspace's
    std::size_t hidden = 0;        // whiteouts: paths not there yet that the run's other tasks may write
    std::size_t redirected_dirs = 0;  // directories of which nothing may be read, pointed at the run's mirror
};

// The directory, at the root of the run's mirror layer, that holds its copy of the workspace's names.
inline constexpr const char* kMirrorName = "__qk_read_mask_mirror";

// Builds in `mask` (an empty directory outside the workspace, on a filesystem that takes user.* extended
// attributes) the layer that leaves readable in an overlay of `root` only `visible`: workspace-relative
// paths ("" is the root), each readable with everything beneath it.
//
// Along the way to each visible path the directories are merged with the workspace's (listing them and
// making entries in them works). Beside it, a file becomes a stand-in: a regular file of mode 000 with the
// real one's size and times, owned by `owner` (kStandInOwner under root; nullopt keeps the builder's own
// id, which a task without capabilities cannot read either). A directory of which nothing may be read
// becomes an opaque directory holding the same names, all the way down, its links copied and its files
// stand-ins: it lists as the workspace's does, reads nothing, and what a task running beside this one
// writes into it does not appear. Left to the workspace wherever they lie: symbolic links on the way
// (their targets resolve through this same view, so a link reaches nothing readable it should not), and
// .git, .qk and node_modules (bound through; inside a refused directory an empty directory stands there
// for the bind). `also_hidden` names paths that may appear while the task runs (what tasks beside it
// will write) and must stay out of its view: a whiteout where nothing is there yet. The directories on the
// way are opened without following a link; one that is a link, or missing, gets nothing beneath it.
//
// `mirror_layer`: the overlay is mounted by the host's root over the run's mirror (build_mirror), this
// path, as a layer between the mask and the workspace. A directory of which nothing may be read that the mirror holds is then an
// empty directory redirected (trusted.overlay.redirect) to its copy there, names as the run started, so
// the mask's cost follows the directories seen in part, not the files refused; one made since the run
// started is mirrored here. The mask's xattrs are trusted.*, and a whiteout hides the mirror's own
// directory at the root.
struct StandInOwner {
    uid_t uid;
    gid_t gid;
};
Result<ReadMaskCounts> build_read_mask(const std::string& root, const std::filesystem::path& mask,
                                       const std::vector<std::string>& visible,
                                       const std::vector<std::string>& also_hidden = {},
                                       std::optional<StandInOwner> owner = std::nullopt,
                                       const std::string& mirror_layer = {});

// The run's mirror of the workspace, built once a run in `mirror_fd` (the root of a tmpfs qk holds):
// kMirrorName holding every name of the workspace as a refused tree would (stand-ins owned by `owner`,
// links copied, directories looking like the workspace's; .git, .qk and node_modules empty).
Result<ReadMaskCounts> build_mirror(const std::string& root, int mirror_fd, StandInOwner owner);

}  // namespace qk::enforce
