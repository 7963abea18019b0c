// Copies between the workspace and an entry's directory of copies (files/ for outputs, warm/ for warm
// state), both ways, every directory on the way opened with O_NOFOLLOW so that nothing is read or written
// through a symbolic link. The store, the restore and warm state share them.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cache_fs.hpp"
#include "entry_check.hpp"
#include "qk/key/cache.hpp"

namespace qk::key::cache_copy {

// Copies workspace paths into a directory of copies, each file hashed as it lies in the cache. It copies
// at most `budget` bytes on disk (allocated blocks) in all: a file over what is left is refused
// (ErrorKind::cache_entry_too_big) before a byte of it is written, even one that grew since it was measured.
class EntryWriter {
public:
    EntryWriter(int root_fd, int copies_fd, std::uint64_t budget = UINT64_MAX)
        : from_(root_fd, false), to_(copies_fd, true), copies_fd_(copies_fd), budget_(budget)
    {
    }
    Result<CachedFile> add(const OutputFile& out);
    std::uint64_t budget_left() const { return budget_; }

private:
    cache_fs::DirCursor from_, to_;
    int copies_fd_;
    std::uint64_t budget_;
};

// What the files among `list` take (entry_check::EntrySize), each looked at beneath `root_fd` without
// following a link; one gone since it was listed counts nothing (the copy says it is gone).
entry_check::EntrySize measure(int root_fd, std::span<const OutputFile> list);

// Puts copies back into the workspace, replacing what stands at each path. A packed entry (no directory
// of copies: `copies_fd` -1) writes its files' bytes itself, through create() and seal(), and puts back
// directories and links with put_back().
class Restorer {
public:
    Restorer(int root_fd, int copies_fd) : root_fd_(root_fd), to_(root_fd, true), from_(copies_fd, false) {}
    Status put_back(const CachedFile& f);
    // The regular file `f`, created empty (mode 0600) in place of what stands at its path.
    Result<UniqueFd> create(const CachedFile& f);
    // `f`'s bytes are all in `fd`: its mode, never a set-id bit.
    static Status seal(int fd, const CachedFile& f);

private:
    int root_fd_;
    cache_fs::DirCursor to_, from_;
};

// Why `output` cannot be reached in the workspace (a link, a file where a directory should be, an errno).
Error open_failure(std::string_view output, const cache_fs::OpenedDir& d);

// Each regular file's copy under `copies_fd` checked against the hash stored with it; the Error names the
// first that differs or cannot be read (the caller decides what a damaged copy costs).
Status check_copies(int copies_fd, std::span<const CachedFile> files);

}  // namespace qk::key::cache_copy
