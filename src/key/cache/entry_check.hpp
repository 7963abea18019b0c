// What an imported meta.json must be before anything of its entry is written: every path one the cache
// may write beneath a build directory, and every size within the import's limits.
#pragma once

#include "cache_meta.hpp"
#include "qk/key/cache_archive.hpp"

namespace qk::key::entry_check {

// Refuses (ErrorKind::cache_entry_unsafe) a path that is not plain and relative (no "..", ".", empty
// component, leading '/', NUL) or not among the entry's outputs, a path listed twice, a path below a file
// or a symbolic link of the list, a link whose target is absolute or climbs above the workspace (read as
// text from the link's directory), and (cache_entry_corrupt) sizes over `limits` or a link whose size is
// not its target's.
Status check(const cache_meta::Parsed& meta, const ArchiveLimits& limits);

// Whether the file system of the directory `fd` has room for the entry `meta` describes (its files and
// terminal output) and then some: what a server sends must not fill the disk the workspace is on. The
// room kept is 5% of the file system, at most 1 GiB. An Error with errno ENOSPC when there is not.
Status room(int fd, const cache_meta::Parsed& meta);

// A symbolic link at `path` (workspace-relative) pointing at `target` names, read as text, something
// inside the workspace: relative, and never above the root however many ".." it holds.
bool target_stays_inside(std::string_view path, std::string_view target);

}  // namespace qk::key::entry_check
