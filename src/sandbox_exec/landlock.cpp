#include "landlock.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>

#include "namespaces.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/unique_fd.hpp"

// Newer than the kernel headers Debian 12 ships.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

namespace qk::sandbox_exec {

namespace {

using Access = std::uint64_t;

// landlock_ruleset_attr as Linux 6.12 has it (Debian 12's headers stop at the first field).
struct landlock_ruleset_attr_v6 {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;
    std::uint64_t scoped;
};
constexpr std::uint64_t kScopeSignal = 1ULL << 1;  // LANDLOCK_SCOPE_SIGNAL
// Landlock's network rules (ABI 4), newer than Debian 12's headers.
constexpr std::uint64_t kConnectTcp = 1ULL << 1;  // LANDLOCK_ACCESS_NET_CONNECT_TCP
constexpr int kRuleNetPort = 2;                    // LANDLOCK_RULE_NET_PORT
struct landlock_net_port_attr_v4 {
    std::uint64_t allowed_access;
    std::uint64_t port;
};

constexpr Access kRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE;
constexpr Access kWrite = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
                          LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                          LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
                          LANDLOCK_ACCESS_FS_MAKE_SYM | LANDLOCK_ACCESS_FS_TRUNCATE;
// What a rule on a file (not a directory) may hold.
constexpr Access kFileRights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
                               LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE;

class Ruleset {
public:
    Ruleset(int fd, Access handled, LandlockCounts& counts) : fd_(fd), handled_(handled), counts_(counts) {}

    // A rule on what `fd` names, with `access` (masked to what is handled and what the kind takes).
    Step add(int fd, Access access, const std::string& what)
    {
        struct stat st {};
        if (::fstat(fd, &st) != 0)
            return setup_error("landlock-rule", "cannot stat " + what);
        return add(fd, access, S_ISDIR(st.st_mode), what);
    }

    // The same where the caller has stat'd it already.
    Step add(int fd, Access access, bool directory, const std::string& what)
    {
        access &= handled_;
        if (!directory)
            access &= kFileRights;
        if (access == 0)
            return std::nullopt;
        struct landlock_path_beneath_attr attr {};
        attr.allowed_access = access;
        attr.parent_fd = fd;
        if (::syscall(SYS_landlock_add_rule, fd_, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) != 0)
            return setup_error("landlock-rule", "Landlock refused a rule for " + what);
        ++counts_.rules;
        return std::nullopt;
    }

    Access handled() const { return handled_; }

private:
    int fd_;
    Access handled_;
    LandlockCounts& counts_;
};

std::string joined(const std::string& dir, std::string_view name)
{
    return (dir == "/" ? dir : dir + "/") + std::string(name);
}

// The devices a tool opens: the rest of /dev (disks above all, which root could write) gets no right.
bool is_common_device(std::string_view name)
{
    static constexpr std::string_view kDevices[] = {"null", "zero", "full", "random", "urandom",
                                                    "tty",  "ptmx", "pts",  "shm",    "mqueue"};
    return std::find(std::begin(kDevices), std::end(kDevices), name) != std::end(kDevices);
}

// What an entry outside the workspace gets: every right, but only reading in /proc and /sys (a sysctl or
// a uevent helper is a file root could write, and the kernel would run what it names), and in /dev only
// the common devices.
Access outside_rights(const std::string& dir, std::string_view name, Access handled)
{
    const std::string path = joined(dir, name);
    if (is_within(path, "/proc") || is_within(path, "/sys"))
        return handled & (kRead | LANDLOCK_ACCESS_FS_REFER);
    if (dir == "/dev")
        return is_common_device(name) ? handled : 0;
    if (is_under(path, "/dev"))
        return handled;  // beneath a common device (a workspace in /dev/shm)
    return handled;
}

// Everything outside what is kept (the workspace, sandboxes' directories under Landlock alone): each
// entry beside each ancestor of a kept path gets outside_rights. `ancestors`: rights for each ancestor
// itself (but "/" and those in /proc, /sys and /dev), so that entries made in them later are allowed
// too; only over an overlay, where what is kept beneath them is safe from writes anyway.
Step allow_outside(Ruleset& rules, const std::vector<std::string>& kept, Access ancestors)
{
    // The proper ancestors of kept paths, and /dev, whose entries are allowed one by one.
    std::vector<std::string> dirs{"/", "/dev"};
    for (const std::string& k : kept)
        for (std::size_t slash = k.rfind('/'); slash != std::string::npos && slash > 0; slash = k.rfind('/', slash - 1))
            dirs.push_back(k.substr(0, slash));
    std::sort(dirs.begin(), dirs.end());
    dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
    auto skipped = [&](const std::string& path) {
        return std::binary_search(dirs.begin(), dirs.end(), path) ||
               std::find(kept.begin(), kept.end(), path) != kept.end();
    };
    for (const std::string& dir : dirs) {
        DIR* d = ::opendir(dir.c_str());
        if (!d)
            return setup_error("landlock-rule", "cannot list " + dir);
        UniqueFd dfd(::dup(::dirfd(d)));
        if (ancestors != 0 && dir != "/" && !is_within(dir, "/proc") && !is_within(dir, "/sys") &&
            !is_within(dir, "/dev"))
            if (auto err = rules.add(dfd.get(), ancestors, dir)) {
                ::closedir(d);
                return err;
            }
        while (dirent* e = ::readdir(d)) {
            std::string_view name = e->d_name;
            if (name == "." || name == ".." || skipped(joined(dir, name)))
                continue;
            Access access = outside_rights(dir, name, rules.handled());
            // A link is left out: it may lead back to an ancestor of the workspace (pytest's
            // pytest-current), whose rule would allow the workspace whole. What links lead to outside the
            // workspace lies beside one of its ancestors, and is allowed there. Nothing is opened for an
            // entry that gets no right (most of /dev) or that the listing says is a link, and what is
            // opened is stat'd once (the type read from the open entry, not the listing): this runs for
            // every command.
            if (access == 0 || e->d_type == DT_LNK)
                continue;
            UniqueFd fd(::openat(dfd.get(), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
            struct stat st {};
            if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || S_ISLNK(st.st_mode))
                continue;
            if (auto err = rules.add(fd.get(), access, S_ISDIR(st.st_mode), joined(dir, name))) {
                ::closedir(d);
                return err;
            }
        }
        ::closedir(d);
    }
    return std::nullopt;
}

// A read-write grant holding a read-only path (qk's cache in .qk), under Landlock alone: read rights on
// the grant, all rights on every entry beside the way down to the read-only path.
Step allow_around(Ruleset& rules, int root_fd, const std::string& grant, const std::string& read_only, Access rw,
                  const std::string& root)
{
    UniqueFd top = open_beneath(root_fd, grant);
    if (!top.valid())
        return std::nullopt;
    if (auto e = rules.add(top.get(), kRead, root + "/" + grant))
        return e;
    std::string dir = grant;
    std::string rest = grant.empty() ? read_only : read_only.substr(grant.size() + 1);
    for (;;) {
        std::size_t slash = rest.find('/');
        std::string next = rest.substr(0, slash);
        UniqueFd at = open_beneath(root_fd, dir);
        UniqueFd listing(at.valid() ? ::openat(at.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1);
        DIR* d = listing.valid() ? ::fdopendir(::dup(listing.get())) : nullptr;
        if (!d)
            return std::nullopt;
        while (dirent* e = ::readdir(d)) {
            std::string_view name = e->d_name;
            if (name == "." || name == ".." || name == next)
                continue;
            std::string rel = dir.empty() ? std::string(name) : dir + "/" + std::string(name);
            UniqueFd fd = open_beneath(root_fd, rel);
            if (fd.valid())
                if (auto err = rules.add(fd.get(), rw, root + "/" + rel)) {
                    ::closedir(d);
                    return err;
                }
        }
        ::closedir(d);
        if (slash == std::string::npos)
            return std::nullopt;
        dir = dir.empty() ? next : dir + "/" + next;
        rest = rest.substr(slash + 1);
    }
}

}  // namespace

Step restrict_self(const enforce::SandboxPlan& plan, LandlockCounts& counts, std::uint16_t proxy_port)
{
    int why = 0;
    counts.abi = enforce::landlock_abi(&why);
    if (counts.abi == 0)
        return SetupError{"landlock", why,
                          why == EOPNOTSUPP ? "Landlock is built into the kernel but not enabled: add landlock to the "
                                              "kernel's lsm= boot parameter"
                                            : "this kernel has no Landlock (Linux 5.13 or later, CONFIG_SECURITY_LANDLOCK)"};
    // Writes are handled in both modes: over an overlay the workspace and the places above it are
    // allowed whole (the overlay and the covers keep what matters beneath them), so that /proc, /sys and
    // /dev, and qk's machinery, can be held.
    Access handled = kRead | kWrite;
    if (counts.abi < 3)
        handled &= ~static_cast<Access>(LANDLOCK_ACCESS_FS_TRUNCATE);
    if (counts.abi >= 2)
        handled |= LANDLOCK_ACCESS_FS_REFER;  // denied unless handled and granted: cross-directory renames
    landlock_ruleset_attr_v6 attr {};
    attr.handled_access_fs = handled;
    // Signals only within the command's own domain (Linux 6.12): it cannot stop or kill qk.
    if (counts.abi >= 6)
        attr.scoped = kScopeSignal;
    const bool hold_tcp = proxy_port != 0 && counts.abi >= 4;
    if (hold_tcp)
        attr.handled_access_net = kConnectTcp;
    const std::size_t attr_size = counts.abi >= 6 ? sizeof attr
                                  : hold_tcp      ? offsetof(landlock_ruleset_attr_v6, scoped)
                                                  : sizeof attr.handled_access_fs;
    UniqueFd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0)));
    if (!ruleset.valid())
        return setup_error("landlock-ruleset", "cannot create a Landlock ruleset");
    if (hold_tcp) {
        landlock_net_port_attr_v4 port {kConnectTcp, proxy_port};
        if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRuleNetPort, &port, 0) != 0)
            return setup_error("landlock-rule", fmt::format("cannot allow TCP connections to the proxy's port {}", proxy_port));
        ++counts.rules;
    }
    Ruleset rules(ruleset.get(), handled, counts);

    std::vector<std::string> kept{plan.root};
    if (!plan.overlay)
        kept.insert(kept.end(), plan.cover.begin(), plan.cover.end());
    const Access write_outside = handled & (kWrite | LANDLOCK_ACCESS_FS_REFER);
    if (auto e = allow_outside(rules, kept, plan.overlay ? write_outside : 0))
        return e;
    UniqueFd root(::open(plan.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid())
        return setup_error("landlock-rule", "cannot open the workspace " + plan.root);
    // Renames and links across directories of the workspace, as long as a file gains no read right.
    // Over an overlay every write too: it lands in the upper layer, and qk keeps only what the rules allow.
    if (auto e = rules.add(root.get(), plan.overlay ? write_outside : LANDLOCK_ACCESS_FS_REFER, plan.root))
        return e;
    const Access read_write = plan.overlay ? kRead | LANDLOCK_ACCESS_FS_REFER : handled;
    // Over a read mask the merged tree holds only what the task may read and what it made: allowed
    // whole, so a file the command creates anywhere is its own to read back.
    if (plan.read_mask) {
        if (auto e = rules.add(root.get(), kRead | LANDLOCK_ACCESS_FS_REFER, plan.root))
            return e;
    }
    for (const auto& g : plan.read_mask ? std::vector<enforce::SandboxPlan::Grant>{} : plan.grants) {
        Access access = g.access == enforce::SandboxPlan::Grant::Access::read ? kRead : read_write;
        auto holds = std::find_if(plan.read_only.begin(), plan.read_only.end(),
                                  [&](const std::string& r) { return is_within(r, g.path); });
        if (!plan.overlay && access == read_write && holds != plan.read_only.end()) {
            if (auto e = allow_around(rules, root.get(), g.path, *holds, read_write, plan.root))
                return e;
            continue;
        }
        UniqueFd fd = open_beneath(root.get(), g.path);
        if (!fd.valid()) {
            ++counts.missing;  // gone since qk walked it, or a link now stands on the way
            continue;
        }
        if (auto e = rules.add(fd.get(), access, plan.root + "/" + g.path))
            return e;
    }
    if (!plan.tmpdir.empty()) {
        UniqueFd tmp(::open(plan.tmpdir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!tmp.valid())
            return setup_error("landlock-rule", "cannot open the temporary directory " + plan.tmpdir);
        if (auto e = rules.add(tmp.get(), handled, plan.tmpdir))
            return e;
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return setup_error("landlock-restrict", "cannot set no_new_privs");
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0) {
        SetupError e = setup_error("landlock-restrict", "Landlock refused to restrict the command");
        if (e.error == E2BIG)
            e.message += " (16 Landlock domains are stacked already: qk runs inside sandboxes nested too deep)";
        return e;
    }
    return std::nullopt;
}

}  // namespace qk::sandbox_exec
