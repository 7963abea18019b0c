#include "entry_check.hpp"

#include <sys/statvfs.h>

#include <algorithm>

#include <fmt/format.h>

#include "cache_fs.hpp"
#include "entry_archive.hpp"
#include "qk/key/output_files.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/string_hash.hpp"

namespace qk::key::entry_check {

namespace {

Error unsafe(std::string message)
{
    return error(std::move(message), ErrorKind::cache_entry_unsafe);
}

const char* kind_word(OutputFile::Kind k)
{
    return k == OutputFile::Kind::symlink ? "symbolic link" : k == OutputFile::Kind::file ? "file" : "directory";
}

}  // namespace

Status room(int fd, const cache_meta::Parsed& meta)
{
    struct statvfs fs {};
    if (::fstatvfs(fd, &fs) != 0)
        return sys_error("cannot tell how much room the cache's file system has");
    std::uint64_t need = meta.terminal_size;
    for (const CachedFile& f : meta.hit.files)
        if (f.kind == OutputFile::Kind::file)
            need += f.size;
    const std::uint64_t unit = fs.f_frsize ? fs.f_frsize : fs.f_bsize;
    const std::uint64_t avail = static_cast<std::uint64_t>(fs.f_bavail) * unit;
    const std::uint64_t kept = std::min<std::uint64_t>(std::uint64_t{1} << 30, fs.f_blocks * unit / 20);
    if (need > avail || avail - need < kept)
        return Error{fmt::format("the entry holds {} bytes, and its file system has {} free, of which {} are kept "
                                 "free: the entry is not written",
                                 need, avail, kept),
                     ENOSPC};
    return {};
}

bool target_stays_inside(std::string_view path, std::string_view target)
{
    if (target.empty() || target.front() == '/' || target.find('\0') != std::string_view::npos)
        return false;
    // Depth below the root of the directory the kernel resolves the target from: the link's own.
    // A ".." only before any name: after one ("a/../x") it climbs out of whatever "a" is, which may be
    // another link of the entry ("a" -> "..") or of the workspace, so the text alone says nothing.
    std::size_t depth = cache_fs::split_path(cache_fs::parent_of(path)).size();
    bool named = false;
    for (std::string_view part : cache_fs::split_path(target)) {
        if (part == ".")
            continue;
        if (part != "..") {
            ++depth;
            named = true;
        } else if (named || depth-- == 0) {
            return false;
        }
    }
    return true;
}

Status check(const cache_meta::Parsed& meta, const ArchiveLimits& limits)
{
    if (meta.terminal_size > limits.terminal_bytes)
        return entry_archive::corrupt(fmt::format("its terminal output of {} bytes is over the limit of {}",
                                                  meta.terminal_size, limits.terminal_bytes));
    auto outputs = OutputSet::compile(meta.hit.outputs);
    if (!outputs)
        return unsafe(fmt::format("its outputs are refused: {}", outputs.error().message));

    StringMap<OutputFile::Kind> listed;
    std::uint64_t total = 0;
    for (const CachedFile& f : meta.hit.files) {
        const std::string shown = printable(f.path);
        if (!is_plain_relative(f.path))
            return unsafe(fmt::format("it lists \"{}\", which is not a plain relative path", shown));
        if (!outputs->contains(f.path))
            return unsafe(fmt::format("it lists {}, which its outputs do not name", shown));
        if (f.mode & 07000)  // setuid, setgid, sticky: nothing a task's output needs from another machine
            return unsafe(fmt::format("it lists {} with mode {:o}, which sets an id or the sticky bit", shown, f.mode));
        if (!listed.emplace(f.path, f.kind).second)
            return unsafe(fmt::format("it lists {} twice", shown));
        if (f.kind == OutputFile::Kind::symlink) {
            if (f.size != f.target.size())
                return entry_archive::corrupt(
                    fmt::format("the symbolic link {} has size {}, its target {}", shown, f.size, f.target.size()));
            if (!target_stays_inside(f.path, f.target))
                return unsafe(fmt::format("the symbolic link {} points at \"{}\", outside the workspace", shown,
                                          printable(f.target)));
        }
        if (f.kind == OutputFile::Kind::file) {
            if (f.size > limits.file_bytes - total)
                return entry_archive::corrupt(
                    fmt::format("its files hold more than the limit of {} bytes", limits.file_bytes));
            total += f.size;
        }
    }
    // Only directories above a path: a file or link there would have the path written through it.
    for (const CachedFile& f : meta.hit.files) {
        for (std::string_view up = cache_fs::parent_of(f.path); !up.empty(); up = cache_fs::parent_of(up)) {
            auto it = listed.find(up);
            if (it != listed.end() && it->second != OutputFile::Kind::directory)
                return unsafe(fmt::format("it lists {} below {}, which it lists as a {}", printable(f.path),
                                          printable(up), kind_word(it->second)));
        }
    }
    return {};
}

}  // namespace qk::key::entry_check
