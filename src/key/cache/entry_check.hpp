// What an imported meta.json must be before anything of its entry is written: every path one the cache
// may write beneath a build directory, and every size within the import's limits.
#pragma once

#include "cache_meta.hpp"
#include "qk/key/cache_archive.hpp"
#include "qk/key/output_files.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace qk::key::entry_check {

// Refuses (ErrorKind::cache_entry_unsafe) a path that is not plain and relative (no "..", ".", empty
// component, leading '/', NUL) or not among the entry's outputs, a path listed twice, a path below a file
// or a symbolic link of the list, a link whose target is absolute or climbs above the workspace (read as
// text from the link's directory), and (cache_entry_corrupt) sizes over `limits` or a link whose size is
// not its target's.
Status check(const cache_meta::Parsed& meta, const ArchiveLimits& limits);

// What a task's outputs take: on disk (allocated blocks, which is what storing them costs, holes being
// kept as holes) and as their sizes say (apparent).
struct EntrySize {
    std::uint64_t allocated = 0;
    std::uint64_t apparent = 0;
};

// An Error (ErrorKind::cache_entry_too_big) when outputs of `size` take more on disk than `limit`
// (QK_CACHE_MAX_ENTRY_SIZE), saying what they take and what to set; the outputs stay in the workspace.
Status within_limit(const EntrySize& size, std::uint64_t limit);

// "4 GiB", "1.5 MiB", "512 bytes": a size for a message.
std::string shown_size(std::uint64_t bytes);

// Whether the file system of the directory `fd` has room for `need` more bytes and then some (the room
// kept is 5% of the file system, at most 1 GiB). An Error with errno ENOSPC when there is not.
Status room_for(int fd, std::uint64_t need);

// Whether the file system of the directory `fd` has room for the entry `meta` describes (its files and
// terminal output) and then some: what a server sends must not fill the disk the workspace is on. The
// room kept is 5% of the file system, at most 1 GiB. An Error with errno ENOSPC when there is not.
Status room(int fd, const cache_meta::Parsed& meta);

// Why an entry whose outputs are `outputs` may not hold a symbolic link at `path` (workspace-relative)
// pointing at `target`, or nullopt when it may: read as text (link_destination), it must lead inside the
// workspace and within the root of one of the outputs. A link out of them leads wherever the workspace
// around the output says, which the entry does not hold; one outside the workspace, anywhere at all.
// The local store, the local find and the remote import refuse alike.
std::optional<std::string> link_refused(const OutputSet& outputs, std::string_view path, std::string_view target);

// Why an entry may not hold `f`, as far as its mode goes: a file that sets a user or group id is
// refused in every entry, local or remote (a root task's setuid shell, restored, would be root's to
// anyone who runs it). nullopt when it may.
std::optional<std::string> mode_refused(const CachedFile& f);

}  // namespace qk::key::entry_check
