// The probe's verdict kept for the boot, in the registry's home as probe-<hash of the key>:
//   the key's lines, then "--", then the report as the probe printed it (probe.cpp's encoding).
// The key is everything the probe's steps depend on that can change without a reboot and can be read
// cheaply: the helper's file, qk's ids, capabilities, no_new_privs and namespaces, its LSM label, the
// sysctls that gate user namespaces, whether it may change mounts in a namespace of its own (a Landlock
// domain it was started in), the mount table (a mount below the workspace, a remount read-only), and the
// mounts holding the workspace and the sandboxes.
#include "qk/enforce/probe_cache.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <thread>

#include <fmt/format.h>
#include <xxhash.h>

#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSeparator = "--\n";

// Files whose whole content goes into the key (trimmed), "-" for one that cannot be read: a sysctl
// missing on this kernel reads the same every time.
constexpr std::array kSysctls = {"/proc/sys/kernel/unprivileged_userns_clone", "/proc/sys/user/max_user_namespaces",
                                 "/proc/sys/user/max_mnt_namespaces",
                                 "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
                                 "/proc/self/attr/current"};
// Lines of /proc/self/status that say what qk's process may do.
constexpr std::array kStatusFields = {"CapPrm:", "CapEff:", "CapBnd:", "CapAmb:", "NoNewPrivs:", "Seccomp:"};

std::string trimmed(std::string s)
{
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\0'))
        s.pop_back();
    return s;
}

std::string file_or_dash(const char* path)
{
    auto text = read_file(path);
    return text ? trimmed(std::move(*text)) : std::string("-");
}

// "DEV MNT_ID" of the mount holding `path`, or nullopt.
std::optional<std::string> mount_of(const std::string& path)
{
    struct statx st {};
    if (::statx(AT_FDCWD, path.c_str(), 0, STATX_INO | STATX_MNT_ID, &st) != 0)
        return std::nullopt;
    return fmt::format("{}:{} {}", st.stx_dev_major, st.stx_dev_minor, st.stx_mnt_id);
}

// The status fields, or nullopt when a seccomp filter is in force: which calls it refuses is not in
// /proc, and Docker's default profile refuses the namespaces the probe tries.
std::optional<std::string> process_status()
{
    auto status = read_file("/proc/self/status");
    if (!status)
        return std::nullopt;
    std::string out;
    std::string_view text = *status;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        for (std::string_view field : kStatusFields) {
            if (!line.starts_with(field))
                continue;
            if (field == "Seccomp:" && line.find_first_not_of(" \t0", field.size()) != std::string_view::npos)
                return std::nullopt;
            out += fmt::format("{}\n", line);
        }
    }
    return out;
}

// Whether a process of qk's may change mounts in a mount namespace of its own: "ok", or the errno. This
// is what a Landlock domain qk was started in takes away, which nothing in /proc shows; a forked child
// tries it, and answers before its namespace is torn down (which waits for an RCU grace period), so it
// is reaped from a thread rather than waited for.
std::string mounts_allowed()
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return "no pipe";
    const bool root = ::geteuid() == 0;
    const pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        int err = 0;
        if (::unshare(root ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
            ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
            err = errno;
        (void)!::write(fds[1], &err, sizeof err);
        ::_exit(0);
    }
    ::close(fds[1]);
    int err = -1;
    const bool answered = child > 0 && ::read(fds[0], &err, sizeof err) == static_cast<ssize_t>(sizeof err);
    ::close(fds[0]);
    if (child > 0)
        std::thread([child] { ::waitpid(child, nullptr, 0); }).detach();
    if (!answered)
        return "no answer";
    return err == 0 ? "ok" : fmt::format("errno {}", err);
}

std::optional<std::string> make_key(const std::string& helper, const std::string& root, const std::string& scratch_base)
{
    std::string boot = file_or_dash("/proc/sys/kernel/random/boot_id");
    auto status = process_status();
    auto root_mount = mount_of(root), scratch_mount = mount_of(scratch_base);
    struct stat hs {};
    if (boot == "-" || !status || !root_mount || !scratch_mount || ::stat(helper.c_str(), &hs) != 0)
        return std::nullopt;
    auto mountinfo = read_file("/proc/self/mountinfo");
    if (!mountinfo)
        return std::nullopt;
    std::string key = fmt::format("boot {}\nhelper {} {} {} {} {}.{}\nids {} {}\n{}", boot, helper, hs.st_dev, hs.st_ino,
                                  hs.st_size, hs.st_mtim.tv_sec, hs.st_mtim.tv_nsec, ::geteuid(), ::getegid(), *status);
    for (const char* ns : {"user", "mnt", "pid", "net"}) {
        std::array<char, 64> link{};
        const std::string path = fmt::format("/proc/self/ns/{}", ns);
        const ssize_t n = ::readlink(path.c_str(), link.data(), link.size() - 1);
        key += fmt::format("ns {}\n", n > 0 ? std::string_view(link.data(), static_cast<std::size_t>(n)) : "-");
    }
    for (const char* f : kSysctls)
        key += fmt::format("{} {}\n", f, file_or_dash(f));
    key += fmt::format("mounts-in-a-namespace {}\n", mounts_allowed());
    key += fmt::format("root {} {}\nsandboxes {} {}\nmounts {:016x}\n", root, *root_mount, scratch_base, *scratch_mount,
                       XXH3_64bits(mountinfo->data(), mountinfo->size()));
    return key;
}

bool every_step_passed(const ProbeReport& report)
{
    if (!report.landlock() || report.steps.empty())
        return false;
    for (const ProbeStep& s : report.steps)
        if (!s.ok)
            return false;
    return true;
}

}  // namespace

std::optional<ProbeCache> ProbeCache::here(const fs::path& dir, const std::string& helper, const std::string& root,
                                           const std::string& scratch_base)
{
    auto key = make_key(helper, root, scratch_base);
    if (!key)
        return std::nullopt;
    fs::path file = dir / fmt::format("probe-{:016x}", XXH3_64bits(key->data(), key->size()));
    return ProbeCache(std::move(file), std::move(*key));
}

std::optional<ProbeReport> ProbeCache::load() const
{
    UniqueFd fd(::open(file_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid())
        return std::nullopt;
    std::string text;
    if (!read_all(fd.get(), text))
        return std::nullopt;
    // Another key with the same hash, or a file cut short: probe again.
    if (!text.starts_with(key_) || std::string_view(text).substr(key_.size(), kSeparator.size()) != kSeparator)
        return std::nullopt;
    auto report = decode_probe(std::string_view(text).substr(key_.size() + kSeparator.size()));
    if (!report || !every_step_passed(*report))
        return std::nullopt;
    return std::move(*report);
}

void ProbeCache::store(const ProbeReport& report) const
{
    if (!every_step_passed(report))
        return;
    (void)write_file_atomically(file_.string(), key_ + std::string(kSeparator) + encode(report),
                                {.mode = 0600});
}

void ProbeCache::forget() const
{
    ::unlink(file_.c_str());
}

}  // namespace qk::enforce
