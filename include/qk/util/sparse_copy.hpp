// Copying a file's content with its holes kept: a sparse file of 50 GB that holds 1 MB of data is copied
// as 1 MB of data and holes, not 50 GB of zeros (the cache's store and restore, and the overlay's apply
// across filesystems).
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk {

// Copies all of `src` into `dst`, an empty regular file: only the ranges lseek(SEEK_DATA)/SEEK_HOLE find
// hold data are copied (copy_file_range, else pread/pwrite, at the same offsets), and `dst` is then cut
// to `src`'s size, so a hole stays a hole wherever it lies, the end included. A file system that reports
// no holes is copied whole. Neither descriptor's offset is used or moved. `what` names the copy in messages.
Status copy_sparse(int src, int dst, std::string_view what);

// The bytes a file takes on disk (its allocated blocks), which a sparse file's size does not say.
constexpr std::uint64_t allocated_bytes(const struct stat& st)
{
    return static_cast<std::uint64_t>(st.st_blocks) * 512;
}

}  // namespace qk
