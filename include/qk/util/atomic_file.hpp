// Replacing a file whole: written to a temporary beside it and renamed over it, so a reader sees the
// old content or the new, never half of either, and a failed write keeps the old.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk {

struct AtomicWrite {
    mode_t mode = 0644;
    // fsync before the rename, so a crash cannot leave the new name on torn content. A file that
    // checks itself (a checksum) may skip it.
    bool durable = true;
};

// Errors name `path` and say what failed; the temporary is removed on every path out.
Status write_file_atomically(const std::string& path, std::string_view bytes, AtomicWrite how = {});

}  // namespace qk
