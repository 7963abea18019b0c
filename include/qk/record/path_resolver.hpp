// PathResolver: makes a path absolute and canonical the way the kernel would have resolved it, for
// the calls whose result carries no path of its own (failed opens, unlink, rename, mkdir, ...):
// "." and ".." handled, symlinks in the directories followed, the last component followed or not.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include "qk/util/string_hash.hpp"

namespace qk::record {

// Paths longer than this cannot be opened by name, nor held whole by the recorders.
inline constexpr std::size_t kPathMax = 4096;

class PathResolver {
public:
    // The lexical form: absolute `base`/`name` with ".", ".." and "//" removed, no filesystem access.
    static std::string join_lexically(std::string_view base, std::string_view name);

    // The canonical form: directories' symlinks resolved on the live filesystem (cached per
    // directory), the last component too when `follow_last`. Parts that no longer exist stay lexical.
    std::string canonical(std::string_view base, std::string_view name, bool follow_last);

    // Whether a lexical path names what one process has: /proc/<self|thread-self|pid>/..., /dev/fd/...,
    // /dev/stdin, /dev/stdout, /dev/stderr. Resolved in qk's process it would be qk's own, so canonical()
    // leaves it as spelled (the eBPF engine decodes the caller's own /proc/self links in the kernel).
    static bool per_process(std::string_view path);
    // Of those, one that leads into files through a descriptor, a cwd or a root (/proc/1234/fd/3/x,
    // /proc/self/cwd/x, /dev/fd/3): a refusal through it is named as spelled, since it cannot be placed.
    static bool through_descriptor(std::string_view path);

private:
    std::string canonical_dir(const std::string& dir);
    // Looked up by string_view: the hot path finds what it resolved before without allocating.
    using Cache = StringMap<std::string>;
    // Shared by copies: a sink and the engine feeding it resolve against one cache.
    std::shared_ptr<Cache> dir_cache_ = std::make_shared<Cache>();
    std::shared_ptr<Cache> follow_cache_ = std::make_shared<Cache>();
    // Whole spellings resolved without following the last component (probes: a compiler probes the
    // same header names in the same directories for every source), by their raw spelling.
    std::shared_ptr<Cache> spelled_cache_ = std::make_shared<Cache>();
    std::string raw_;  // reused for each spelling
};

}  // namespace qk::record
