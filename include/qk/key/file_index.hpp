// The workspace's files as Nx's walker sees them (.gitignore, .ignore, .nxignore and .git/info/exclude
// honoured; node_modules, .git and .qk never entered), the project owning each, and their content
// hashes: computed on demand, in parallel, and kept in <root>/.qk/cache/file-hashes between runs.
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qk/key/hash.hpp"
#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::key {

class FileIndex {
public:
    // Lists the workspace's regular files and symbolic links (not followed), and reads the persistent
    // hash cache meanwhile on a second thread. Errors: the root cannot be read. Directories below it
    // that cannot be read are skipped, as Nx skips them.
    static Result<FileIndex> scan(const workspace::Workspace& ws);
    // The same walk before the workspace is loaded (one walk serves project discovery and the index):
    // every file has no owner until assign_owners().
    static Result<FileIndex> scan_tree(const std::filesystem::path& root);
    // Gives each file the project holding it most closely (as Workspace::project_owning does).
    void assign_owners(const workspace::Workspace& ws);

    FileIndex(FileIndex&&) noexcept;
    FileIndex& operator=(FileIndex&&) noexcept;
    ~FileIndex();

    const std::filesystem::path& root() const { return root_; }
    // '/'-separated, workspace-relative, sorted bytewise.
    const std::vector<std::string>& files() const { return files_; }
    std::optional<std::size_t> find(std::string_view path) const;
    // The index in Workspace::projects() of the project holding the file most closely.
    std::optional<std::size_t> owner(std::size_t file) const;
    // The files `project` owns (not those of projects nested in it), sorted.
    std::span<const std::uint32_t> files_of(std::size_t project) const;
    // The index range [first, last) of the files equal to `prefix` or under it as a directory ("" for
    // all files), found by binary search: for walking a glob's literal prefix.
    std::pair<std::size_t, std::size_t> range_under(std::string_view prefix) const;

    // The entries the scan skipped by name (special_names.hpp): every .git (directory or file), .qk and
    // node_modules, whatever their ASCII case or type, workspace-relative, sorted bytewise. Only those the
    // scan came across: none under one of them, an ignored directory or one that could not be read.
    const std::vector<std::string>& special_entries() const { return specials_; }
    // Whether some special entry lies strictly under the directory `dir` ("" or "." for the root; a
    // trailing '/' is ignored), by binary search: for a walk that must not allow a directory holding one.
    bool holds_special(std::string_view dir) const;

    // Hashes the files given (indices into files()), in parallel, reusing the persistent cache where
    // a file's size, mtime, ctime, inode and type are unchanged. Files hashed before are not hashed
    // again; safe to call from several threads at once. Errors name the first file that could not be
    // hashed (removed since the scan, unreadable, no longer a file).
    Status hash(std::span<const std::uint32_t> files);
    // The content hash of a file that hash() covered; for a symbolic link, the hash of its target's
    // text, domain-separated so that it never equals the hash of a file holding that text.
    Hash128 hash_of(std::size_t file) const;
    // How a file a key holds differs from what hash() saw of it (changed_since_hashed).
    struct Change {
        enum class Kind {
            removed,    // gone
            content,    // another content or type
            // The same content, but a new stamp: written over, or changed and put back (its ctime, which no
            // call can set back, moved; its mtime may have been restored)
            rewritten,
        };
        std::string path;
        Kind kind = Kind::content;
    };
    // The first of `files` (those hash() covered; the others are skipped) changed in any way since it was
    // hashed: gone, another content, or the same content with a new stamp (size, mtime, ctime, inode or
    // mode), unless `may_rewrite` says the path may be written over (a task's own output that its inputs
    // hold too): then its content alone decides. nullopt when all hold. The guard before a result is
    // stored under a key: a file edited while the task ran was read at a content the key does not say,
    // even when the edit was put back before the task ended. It costs the lstat of each file; the content
    // is read again only where the stamp moved.
    std::optional<Change> changed_since_hashed(std::span<const std::uint32_t> files,
                                               const std::function<bool(std::string_view)>& may_rewrite = {}) const;
    // Whether a file that hash() covered was a symbolic link when it was hashed (its lstat then).
    bool is_symlink(std::size_t file) const;
    // The content hash of a regular file outside the index (an output, git-ignored), `st` its lstat:
    // taken from the persistent cache while its size, times, inode and mode are unchanged, else read and
    // kept there for the next run. Thread-safe.
    Result<Hash128> hash_elsewhere(std::string_view path, const struct stat& st);
    // Writes .qk/cache/file-hashes (atomically) when this run hashed anything anew. `end_of_run`: the
    // entries outside the index that this process did not use are dropped (a run's last save).
    Status save_hash_cache(bool end_of_run = false);

    // How many files hash() has read so far, and how many it took from the persistent cache instead.
    struct HashCounts {
        std::size_t read = 0, reused = 0;
    };
    HashCounts hash_counts() const;

    // The path of the persistent hash cache under `root`.
    static std::filesystem::path hash_cache_path(const std::filesystem::path& root);

private:
    FileIndex();
    Status walk(int root_fd);

    std::filesystem::path root_;
    std::vector<std::string> files_;
    std::vector<std::int32_t> owner_;                        // per file; -1: no project
    std::vector<std::vector<std::uint32_t>> project_files_;  // per project
    std::vector<std::string> specials_;                      // special_entries()
    struct Hashing;                                          // the thread-shared hashing state (file_index_hash.cpp)
    std::unique_ptr<Hashing> hashing_;
};

}  // namespace qk::key
