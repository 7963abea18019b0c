// What a sandboxed command changed in the workspace, read from its overlay's upper layer: the list
// apply() takes, workspace-relative, parents before children.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::enforce {

enum class ChangeKind {
    removed,            // a whiteout: the workspace entry (file, link or whole directory) is gone
    replaced_directory,  // an opaque directory over a workspace directory: its old content is gone and
                        // the upper holds the whole new content, listed beneath it
    created_directory,  // a directory with no directory in the workspace (nothing there, or a file or a
                        // symbolic link it replaces); everything beneath it is listed too
    file,               // a regular file, created or modified (a copy-up holds the whole file)
    symlink,            // a symbolic link, created or replaced (never followed)
    special,            // a fifo, socket or device that is not a whiteout
};
std::string_view to_string(ChangeKind kind);

struct Change {
    std::string path;  // workspace-relative; any byte but '/' and NUL may appear in a name
    ChangeKind kind;
    friend bool operator==(const Change&, const Change&) = default;
};

// Reads the upper layer `upper_dir` of an overlay whose lower layer is `workspace_root` (userxattr
// format: whiteouts are char devices 0/0 or zero-size files with user.overlay.whiteout; an opaque
// directory has user.overlay.opaque "y"; "x" marks a merged directory holding xattr whiteouts, not an
// opaque one). A directory in both that is not opaque is walked, not listed. Under a created or replaced
// directory every entry is listed (directories as created_directory) and whiteouts, which hide nothing
// there, are dropped; so is a whiteout of something the workspace no longer holds. Nothing is followed:
// neither a link in the upper nor one in the workspace, where an upper directory over a workspace link
// is a created_directory replacing the link. Entries are in pre-order, sorted by name bytes.
// A directory's own mode or time change (chmod of a directory that was already there) is not a change.
Result<std::vector<Change>> read_upper_layer(const std::filesystem::path& upper_dir,
                                             const std::filesystem::path& workspace_root);
Result<std::vector<Change>> read_upper_layer(int upper_fd, int workspace_fd);

}  // namespace qk::enforce
