// Stats and hashes workspace files for one hashing thread. Each file is reached from a descriptor of
// its directory, kept open while consecutive files share it, rather than from the root: on a warm run
// (hashes from the cache) the per-file path walk from the root is most of the cost.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "qk/key/hash.hpp"
#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::key {

class FileReader {
public:
    FileReader(int root_fd, const std::filesystem::path& root) : root_fd_(root_fd), root_(root) {}

    // lstat of the workspace-relative `path`. The Error's sys_errno says why (ENOENT: it is gone).
    Status stat(std::string_view path, struct stat& st);
    // The hash of the file last given to stat(), as `st` described it: the content of a regular file
    // (equal to hash_file), or a symbolic link's text under a tag of its own.
    Result<Hash128> hash(std::string_view path, const struct stat& st);

private:
    Status enter(std::string_view path);
    int dir_fd() const { return dir_fd_.valid() ? dir_fd_.get() : root_fd_; }

    int root_fd_;
    const std::filesystem::path& root_;
    std::string dir_;       // the directory held open, workspace-relative ("" for the root)
    UniqueFd dir_fd_;       // invalid while dir_ is the root
    bool dir_open_ = true;  // false after a failed open of dir_, so that the next file retries
    std::string base_;      // the last component of the current file, NUL-terminated for the syscalls
    std::string buffer_;    // file content, reused from file to file
};

}  // namespace qk::key
