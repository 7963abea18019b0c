// Applier: the state of one apply() call. apply.cpp holds the walk, files, links and the workspace's
// parent directories; apply_directories.cpp directory changes and removals.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dir_stack.hpp"
#include "qk/enforce/apply.hpp"
#include "trash.hpp"

namespace qk::enforce::detail {

class Applier {
public:
    Applier(int up_root, int ws_root, const std::vector<Change>& changes, const KeepFn& keep, int trash_fd,
            const LinkFn& may_link)
        : up_root_(up_root), changes_(changes), keep_(keep), may_link_(may_link), up_(up_root), ws_(ws_root),
          trash_(trash_fd)
    {
    }
    Result<ApplyResult> run();

private:
    Status prepare();
    // keep() of change i, and for a link may_link() of its target too (in refused_ when it says no).
    Result<bool> judge(std::size_t i);
    Result<std::size_t> step(std::size_t i);

    // keep() of change i, asked once in prepare(); how many changes in i's subtree (itself included) it
    // keeps, and how many the subtree holds.
    bool kept(std::size_t i) const { return kept_before_[i + 1] != kept_before_[i]; }
    std::size_t kept_in(std::size_t i) const { return kept_before_[end_[i]] - kept_before_[i]; }
    std::size_t size_of(std::size_t i) const { return end_[i] - i; }
    bool may_hold_outputs(std::string_view rel) const { return keep_(rel, false) || keep_(rel, true); }
    void discard(const std::string& rel, ChangeKind kind) { result_.discarded.push_back({rel, kind}); }

    // The workspace directory `rel`, made where it is missing and put in place of a link or a file where
    // the task made a directory; `refused` when keep() does not let such a directory be made.
    struct WsDir {
        int fd = -1;  // borrowed from ws_
        bool refused = false;
    };
    Result<WsDir> ensure_ws_dir(std::string_view rel);
    Result<int> up_dir(std::string_view rel);
    // Moves the upper's entry at `rel` into the workspace, replacing what is there; false when a
    // directory it needs may not be made.
    Result<bool> move_in(const std::string& rel);

    Status leaf(std::size_t i);
    Result<std::size_t> directory(std::size_t i);
    enum class Whole { moved, refused, merge };
    Result<Whole> whole(std::size_t i);
    Status removal(std::size_t i);
    // Removes from the workspace directory open as `dir_fd` (at `rel`) what keep() lets go, as a task's
    // removing or emptying it asks. Names the upper directory `up_fd` (-1: none) holds are left for the
    // upper's entries to replace, except that a directory in both is pruned the same way, since the
    // upper's holds its whole content.
    Status prune(int dir_fd, const std::string& rel, int up_fd);

    int up_root_;
    const std::vector<Change>& changes_;
    const KeepFn& keep_;
    const LinkFn& may_link_;
    DirStack up_, ws_;
    Trash trash_;
    std::vector<std::size_t> end_, kept_before_;
    std::unordered_map<std::size_t, std::string> refused_;  // links may_link() refused, by change: their targets
    ApplyResult result_;
};

}  // namespace qk::enforce::detail
