// A task's outputs on disk: what its resolved output patterns name, as files, symbolic links and empty
// directories, for the cache to store and restore and for a key to hash a dependency task's outputs.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/glob.hpp"

namespace qk::key {

struct OutputFile {
    std::string path;  // workspace-relative
    enum class Kind { file, symlink, directory } kind;
    friend bool operator==(const OutputFile&, const OutputFile&) = default;
};

// Resolved output patterns ("packages/app/dist", "dist/app/**/*.js", "!packages/app/dist/cache") compiled:
// which workspace paths are outputs, and where to walk to find them. A pattern with no glob syntax names
// a file or a whole directory; a glob names the files it matches; "!" patterns exclude, across the group.
class OutputSet {
public:
    // Refuses a pattern that could name something outside the workspace or the workspace itself: an
    // absolute path, a "." or ".." component, an empty path.
    static Result<OutputSet> compile(std::span<const std::string> patterns);

    // Where a walk starts: `path` names a file or a whole directory (`whole`, a pattern with no glob
    // syntax), or is the literal prefix of a glob. Roots under .git, .qk or node_modules are left out.
    struct Root {
        std::string path;
        bool whole = false;
    };
    const std::vector<Root>& roots() const { return roots_; }
    const std::vector<std::string>& patterns() const { return patterns_; }

    // No outputs, or only exclusions, match nothing (a GlobSet of none matches everything).
    bool matches(std::string_view path) const { return any_positive_ && set_.matches(path); }
    bool may_match_under(std::string_view dir) const { return set_.may_match_under(dir); }
    // True when `path` is an output a walk can find: a plain relative path ("a/b", no "." or ".."), outside
    // .git, .qk and node_modules, that the patterns match. The cache writes nowhere else.
    bool contains(std::string_view path) const;
    // .git, .qk and node_modules (however cased): an output walk never enters them.
    static bool never_entered(std::string_view name);

private:
    std::vector<std::string> patterns_;
    std::vector<Root> roots_;
    workspace::GlobSet set_;
    bool any_positive_ = false;
};

// The files and symbolic links that exist under `root` matching `patterns`, plus the empty directories
// within an output named whole, workspace-relative and sorted. A walk never follows a link nor enters
// .git, .qk or node_modules. Errors: a refused pattern, a bad glob, a symbolic link on the way to an
// output (outputs are never read or written through one), a directory that cannot be read.
Result<std::vector<OutputFile>> collect_output_files(const std::filesystem::path& root,
                                                     std::span<const std::string> patterns);
Result<std::vector<OutputFile>> collect_output_files(int root_fd, const OutputSet& outputs);

}  // namespace qk::key
