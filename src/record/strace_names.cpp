#include "strace_names.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>

#include <charconv>
#include <cstring>
#include <string>
#include <unordered_map>

namespace qk::record::strace {
namespace {

using Table = std::unordered_map<std::string_view, std::uint64_t>;

std::optional<std::uint64_t> find(const Table& table, std::string_view name)
{
    auto it = table.find(name);
    if (it == table.end())
        return std::nullopt;
    return it->second;
}

}  // namespace

std::optional<std::uint64_t> open_flag(std::string_view name)
{
    static const Table table = {
        {"O_RDONLY", O_RDONLY},
        {"O_WRONLY", O_WRONLY},
        {"O_RDWR", O_RDWR},
        {"O_ACCMODE", O_ACCMODE},
        {"O_CREAT", O_CREAT},
        {"O_EXCL", O_EXCL},
        {"O_NOCTTY", O_NOCTTY},
        {"O_TRUNC", O_TRUNC},
        {"O_APPEND", O_APPEND},
        {"O_NONBLOCK", O_NONBLOCK},
        {"O_NDELAY", O_NDELAY},
        {"O_DSYNC", O_DSYNC},
        {"O_SYNC", O_SYNC},
        {"__O_SYNC", O_SYNC & ~O_DSYNC},
        {"O_ASYNC", O_ASYNC},
        {"FASYNC", O_ASYNC},
        {"O_DIRECT", O_DIRECT},
        // glibc defines O_LARGEFILE as 0 on 64-bit targets; it only lifts a size limit, which no
        // recording cares about.
        {"O_LARGEFILE", 0},
        {"O_DIRECTORY", O_DIRECTORY},
        {"O_NOFOLLOW", O_NOFOLLOW},
        {"O_NOATIME", O_NOATIME},
        {"O_CLOEXEC", O_CLOEXEC},
        {"O_PATH", O_PATH},
        // strace names the whole O_TMPFILE (which includes O_DIRECTORY) and the bit alone.
        {"O_TMPFILE", O_TMPFILE},
        {"__O_TMPFILE", O_TMPFILE & ~O_DIRECTORY},
    };
    return find(table, name);
}

std::optional<std::uint64_t> at_flag(std::string_view name)
{
    static const Table table = {
        {"AT_SYMLINK_NOFOLLOW", AT_SYMLINK_NOFOLLOW},
        {"AT_REMOVEDIR", AT_REMOVEDIR},
        {"AT_EACCESS", AT_EACCESS},
        {"AT_SYMLINK_FOLLOW", AT_SYMLINK_FOLLOW},
        {"AT_NO_AUTOMOUNT", AT_NO_AUTOMOUNT},
        {"AT_EMPTY_PATH", AT_EMPTY_PATH},
        {"AT_RECURSIVE", AT_RECURSIVE},
    };
    return find(table, name);
}

std::optional<std::uint64_t> rename_flag(std::string_view name)
{
    static const Table table = {
        {"RENAME_NOREPLACE", RENAME_NOREPLACE},
        {"RENAME_EXCHANGE", RENAME_EXCHANGE},
        {"RENAME_WHITEOUT", RENAME_WHITEOUT},
    };
    return find(table, name);
}

std::optional<std::uint64_t> clone_flag(std::string_view name)
{
    static const Table table = {
        {"CLONE_VM", CLONE_VM},
        {"CLONE_FS", CLONE_FS},
        {"CLONE_FILES", CLONE_FILES},
        {"CLONE_VFORK", CLONE_VFORK},
        {"CLONE_THREAD", CLONE_THREAD},
        {"CLONE_NEWNS", CLONE_NEWNS},
        {"CLONE_NEWNET", CLONE_NEWNET},
        {"CLONE_NEWUTS", CLONE_NEWUTS},
        {"CLONE_NEWIPC", CLONE_NEWIPC},
        {"CLONE_NEWUSER", CLONE_NEWUSER},
        {"CLONE_NEWPID", CLONE_NEWPID},
        {"CLONE_NEWCGROUP", CLONE_NEWCGROUP},
    };
    if (auto v = find(table, name))
        return v;
    // The other CLONE_* bits and the exit signal change nothing the recording holds.
    if (name.starts_with("CLONE_") || name.starts_with("SIG"))
        return 0;
    return std::nullopt;
}

std::optional<std::uint64_t> mount_flag(std::string_view name)
{
    static const Table table = {
        {"MS_REMOUNT", MS_REMOUNT}, {"MS_BIND", MS_BIND},     {"MS_UNBINDABLE", MS_UNBINDABLE},
        {"MS_PRIVATE", MS_PRIVATE}, {"MS_SLAVE", MS_SLAVE}, {"MS_SHARED", MS_SHARED},
    };
    if (auto v = find(table, name))
        return v;
    if (name.starts_with("MS_"))
        return 0;  // the other bits decide nothing about aliases
    return std::nullopt;
}

std::optional<std::uint64_t> open_tree_flag(std::string_view name)
{
    if (name == "OPEN_TREE_CLONE")
        return 1;
    if (name == "OPEN_TREE_CLOEXEC")
        return O_CLOEXEC;
    return at_flag(name);
}

std::optional<int> errno_number(std::string_view name)
{
    static const auto table = [] {
        std::unordered_map<std::string, int> t;
        for (int e = 1; e < 4096; e++)
            if (const char* n = ::strerrorname_np(e))
                t.emplace(n, e);
        // Aliases glibc names differently, and the kernel-internal codes strace shows for
        // interrupted calls (include/linux/errno.h).
        t.emplace("EWOULDBLOCK", EWOULDBLOCK);
        t.emplace("EDEADLOCK", EDEADLOCK);
        t.emplace("ENOTSUP", ENOTSUP);
        const char* internal[] = {"ERESTARTSYS",  "ERESTARTNOINTR", "ERESTARTNOHAND",         "ENOIOCTLCMD",
                                  "ERESTART_RESTARTBLOCK", "EPROBE_DEFER", "EOPENSTALE", "ENOPARAM"};
        for (int i = 0; i < 8; i++)
            t.emplace(internal[i], 512 + i);
        return t;
    }();
    auto it = table.find(std::string(name));
    if (it == table.end())
        return std::nullopt;
    return it->second;
}

std::optional<int> signal_number(std::string_view name)
{
    // strace numbers real-time signals from the kernel's SIGRTMIN (32), not glibc's.
    constexpr int kKernelRtMin = 32;
    if (name == "SIGRTMIN")
        return kKernelRtMin;
    if (name.starts_with("SIGRT_")) {
        int n = 0;
        auto rest = name.substr(6);
        auto [end, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
        if (ec != std::errc() || end != rest.data() + rest.size() || kKernelRtMin + n >= 65)
            return std::nullopt;
        return kKernelRtMin + n;
    }
    if (!name.starts_with("SIG"))
        return std::nullopt;
    for (int s = 1; s < kKernelRtMin; s++)
        if (const char* abbrev = ::sigabbrev_np(s); abbrev && name.substr(3) == abbrev)
            return s;
    if (name == "SIGIOT")
        return SIGABRT;
    if (name == "SIGPOLL")
        return SIGIO;
    return std::nullopt;
}

}  // namespace qk::record::strace
