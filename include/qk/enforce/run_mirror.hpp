// RunMirror: the run's mirror of the workspace under --sandbox=enforce as root, on a tmpfs that lives as
// long as qk holds it (a detached mount: nothing is mounted anywhere, so a killed run leaves nothing). Each
// command's read mask points the directories of which nothing may be read at it, rather than mirroring
// their names itself: the mask then costs what the directories seen in part hold, not every file refused.
#pragma once

#include <string>

#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce {

class RunMirror {
public:
    // Mounts a tmpfs detached from every tree and builds the mirror of `root` in it (build_mirror).
    static Result<RunMirror> create(const std::string& root);

    // The path a helper passes to overlayfs as a lower layer: this process's descriptor of the mount,
    // through /proc, which only a process of the same user (root) may follow.
    std::string layer_path() const;
    std::size_t entries() const { return entries_; }

private:
    RunMirror(UniqueFd mount, std::size_t entries) : mount_(std::move(mount)), entries_(entries) {}
    UniqueFd mount_;
    std::size_t entries_ = 0;
};

}  // namespace qk::enforce
