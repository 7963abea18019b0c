// ReadMask: the overlay layer laid between a task's upper layer and the workspace under
// --sandbox=enforce, which leaves out of the task's view what existed before it started and that it may
// not read. Landlock can then allow the workspace whole, so what the task creates anywhere (vite's
// config.timestamp file beside its config, vitest's coverage/.tmp in a directory it made again) is
// its own to read back, while undeclared files stay out of reach.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::enforce {

struct ReadMaskCounts {
    std::size_t hidden_files = 0;  // whiteouts: files (and fifos, sockets) left out
    std::size_t hidden_dirs = 0;   // opaque empty directories: a directory's contents left out whole
    std::size_t kept_dirs = 0;     // directories partly visible, merged with the workspace's
};

// Builds in `mask` (an empty directory outside the workspace, on a filesystem that takes user.*
// extended attributes) the layer that hides from an overlay of `root` everything but `visible`:
// workspace-relative paths ("" is the root) each visible with everything beneath it. Along the way to
// each visible path the directories stay (merged, so listing them works and new entries may be made);
// beside it a file becomes a whiteout, and a directory an opaque empty directory, which the task may
// still list, enter and write in. Left visible wherever they lie: symbolic links (their targets
// resolve through the same view, so a link reaches nothing hidden), .git, .qk and node_modules (bound
// through from the real workspace), and `also_hidden` adds paths that may appear while the task runs
// (what tasks running beside it will write) and must stay out of its view. The directories on the way
// are opened without following a link; one that is a link, or missing, hides nothing beneath it.
Result<ReadMaskCounts> build_read_mask(const std::string& root, const std::filesystem::path& mask,
                                       const std::vector<std::string>& visible,
                                       const std::vector<std::string>& also_hidden = {});

}  // namespace qk::enforce
