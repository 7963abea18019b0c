// A walk of the workspace on disk for the enforce walk (rules_grants.cpp): never following a link,
// never entering .git, .qk or node_modules, seeing ignored files too (Landlock holds what is on disk).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace qk::rules {

enum class WalkStep { descend, skip };

struct TreeVisitor {
    // A directory met (the start included, if it is one); `holds_special` says whether .git, .qk or
    // node_modules lies directly in it. skip: not entered.
    std::function<WalkStep(std::string_view rel, bool holds_special)> dir;
    // A regular file met (links and other kinds are left out: allowing a link allows what it leads to).
    std::function<void(std::string_view rel)> file;
};

// Walks `start` (workspace-relative, "" for the root) under the workspace `root_fd`. A start that is
// missing, a link, or reached through a link visits nothing; unreadable directories are skipped.
void walk_tree(int root_fd, std::string_view start, const TreeVisitor& visit);

// Whether `rel` exists under `root_fd` with no symbolic link on the way (itself included), and what it
// is: 0 (missing, a link, or through one), 'd' (directory), 'f' (regular file).
char kind_without_links(int root_fd, std::string_view rel);

}  // namespace qk::rules
