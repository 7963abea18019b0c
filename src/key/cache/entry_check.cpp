#include "entry_check.hpp"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "cache_fs.hpp"
#include "entry_archive.hpp"
#include "qk/key/output_files.hpp"
#include "qk/util/link_target.hpp"
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

std::string shown_size(std::uint64_t bytes)
{
    constexpr const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (bytes < 1024)
        return fmt::format("{} bytes", bytes);
    double v = static_cast<double>(bytes) / 1024;
    std::size_t u = 0;
    for (; v >= 1024 && u + 1 < std::size(units); ++u)
        v /= 1024;
    if (v == static_cast<double>(static_cast<std::uint64_t>(v)))
        return fmt::format("{} {}", static_cast<std::uint64_t>(v), units[u]);
    return fmt::format("{:.1f} {}", v, units[u]);
}

Status within_limit(const EntrySize& size, std::uint64_t limit)
{
    if (size.allocated <= limit)
        return {};
    // What to set: the next whole GiB above what they take, so the same outputs fit next time.
    const std::uint64_t gib = std::uint64_t{1} << 30;
    const std::uint64_t enough = (size.allocated + gib - 1) / gib;
    std::string sparse = size.apparent > size.allocated ? fmt::format(" ({} as their sizes say: holes in sparse "
                                                                      "files are not counted, as they are stored "
                                                                      "as holes)",
                                                                      shown_size(size.apparent))
                                                        : std::string();
    return error(fmt::format("its outputs take {} on disk{}, over the {} one cache entry may take; they stay in the "
                             "workspace, and the next run runs it again; to cache it, set "
                             "QK_CACHE_MAX_ENTRY_SIZE={}GiB or more, or declare fewer outputs",
                             shown_size(size.allocated), sparse, shown_size(limit), enough),
                 ErrorKind::cache_entry_too_big);
}

Status room_for(int fd, std::uint64_t need)
{
    struct statvfs fs {};
    if (::fstatvfs(fd, &fs) != 0)
        return sys_error("cannot tell how much room the cache's file system has");
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

Status room(int fd, const cache_meta::Parsed& meta)
{
    std::uint64_t need = meta.terminal_size;
    for (const CachedFile& f : meta.hit.files)
        if (f.kind == OutputFile::Kind::file)
            need += f.size;
    return room_for(fd, need);
}

std::optional<std::string> link_refused(const OutputSet& outputs, std::string_view path, std::string_view target)
{
    std::optional<std::string> to = link_destination(path, target);
    if (!to)
        return fmt::format("the symbolic link {} points at \"{}\", outside the workspace", printable(path),
                           printable(target));
    for (const OutputSet::Root& root : outputs.roots())
        if (is_within(*to, root.path))
            return std::nullopt;
    return fmt::format("the symbolic link {} points at \"{}\", out of its outputs ({})", printable(path),
                       printable(target), to->empty() ? "the workspace root" : printable(*to));
}

std::optional<std::string> mode_refused(const CachedFile& f)
{
    if (f.kind != OutputFile::Kind::file || (f.mode & (S_ISUID | S_ISGID)) == 0)
        return std::nullopt;
    return fmt::format("{} has mode {:o}, which sets a {} id when it runs, and no cache entry restores one", printable(f.path),
                       f.mode, (f.mode & S_ISUID) ? "user" : "group");
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
            if (std::optional<std::string> why = link_refused(*outputs, f.path, f.target))
                return unsafe(std::move(*why));
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
