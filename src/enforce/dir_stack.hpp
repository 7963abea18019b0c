// DirStack: the directories along one relative path, opened from a root fd without following a link and
// kept open while the next path asked for shares their prefix. Changes come parents first, so walking
// them costs about one open per directory, not one per component per change.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qk/util/unique_fd.hpp"

namespace qk::enforce {

class DirStack {
public:
    explicit DirStack(int root_fd) : root_(root_fd) {}

    // Called when component `name` of `prefix` (its path from the root) cannot be opened as a directory:
    // `err` is ENOENT (missing), ELOOP (a link) or ENOTDIR (something else). Returning true means it
    // made a directory there, and the open is tried once more.
    using Repair = std::function<bool(int parent_fd, std::string_view prefix, std::string_view name, int err)>;

    struct Opened {
        int fd = -1;    // borrowed: valid until the stack moves on; -1 when not opened
        int err = 0;    // why not
        std::string at;  // the component that failed
    };
    // The directory `rel` ("" is the root), each component opened with openat2(RESOLVE_BENEATH |
    // RESOLVE_NO_SYMLINKS), so a link anywhere on the way is refused (ELOOP), never followed.
    Opened open(std::string_view rel, const Repair& repair = nullptr);
    // Closes `rel` and everything under it: call after replacing or removing that directory.
    void forget(std::string_view rel);

private:
    int root_;
    std::vector<std::pair<std::string, UniqueFd>> stack_;  // each a child of the one before
};

}  // namespace qk::enforce
