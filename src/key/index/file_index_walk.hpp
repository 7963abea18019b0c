// The walk of one directory tree for FileIndex::scan, by one thread: as Nx's walker sees the tree.
// The scan splits the workspace into subtrees and runs one Walker per subtree, in parallel.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ignore_rules.hpp"
#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

// What every walker of a scan reads and none writes. The walk assigns no owners: FileIndex::assign_owners
// does, once projects are known (they are discovered among the files the walk lists).
struct WalkContext {
    explicit WalkContext(const std::filesystem::path& root) : root(root) {}

    const std::filesystem::path& root;
    std::unordered_map<std::string_view, std::int32_t> roots;  // empty: no project owns anything yet
    std::int32_t root_owner = -1;
};

// A directory to walk: where it is, the ignore files of its ancestors, the project owning it.
struct WalkStart {
    std::string path;  // workspace-relative with a trailing '/', "" for the root
    IgnoreStack ignores;
    std::int32_t owner = -1;
    std::size_t position = 0;  // how many of its parent's files come before its own (Walker::expand)
};

// Files found, in bytewise order, with the index of the project owning each (-1: none), and the
// special entries skipped by name (.git, .qk, node_modules; workspace-relative, in no order).
struct WalkOutput {
    std::vector<std::string> files;
    std::vector<std::int32_t> owners;
    std::vector<std::string> specials;
};

class Walker {
public:
    Walker(const WalkContext& context, const WalkStart& start, WalkOutput& out);
    ~Walker();

    // Walks the directory open as `fd` (the start's) and everything under it.
    Status walk(int fd);
    // Lists only that directory: its files go to the output, its subdirectories (in order, not
    // ignored) to `subdirs`, for walking separately.
    Status expand(int fd, std::vector<WalkStart>& subdirs);

    // Opens a directory found by a walk; an empty descriptor for one that cannot be read or is gone
    // (skipped, as Nx skips it), an error when the process is out of descriptors or memory.
    static Result<UniqueFd> open_dir(int at, const char* name, std::string_view display, const WalkContext& context);

private:
    struct Listing;
    Status dir(int fd, std::size_t depth, std::int32_t owner, std::vector<WalkStart>* subdirs);
    Status list(int fd, Listing& out);
    void remember_special(std::string_view name);  // an entry of the directory listed, skipped by name

    const WalkContext& context_;
    WalkOutput& out_;
    std::int32_t owner_;
    std::string path_;  // the current directory, with a trailing '/' ("" at the root)
    IgnoreStack ignores_;
    std::vector<char> buffer_;
    std::vector<std::unique_ptr<Listing>> listings_;  // by depth; stable while deeper ones are used
    bool has_[ignore_source_count] = {};              // the ignore sources of the directory listed
};

}  // namespace qk::key
