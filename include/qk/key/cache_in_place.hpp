// Whether a cache hit's outputs are already in the workspace, byte for byte: a run restoring a task
// whose outputs nobody touched since then has nothing to write (Nx's daemon skips such restores too).
#pragma once

#include "qk/key/cache.hpp"
#include "qk/key/file_index.hpp"

namespace qk::key {

// True when what the hit's output patterns name on disk is exactly the stored files: the same paths
// and kinds, modes, symlink targets, sizes and bytes. Any doubt (a file unreadable) answers false.
// With `stamps`, a file's hash is taken from the persistent file hash cache while its size, times, inode
// and mode are unchanged (FileIndex::hash_elsewhere), rather than read each time.
bool outputs_in_place(const LocalCache& cache, const CacheHit& hit, FileIndex* stamps = nullptr);

}  // namespace qk::key
