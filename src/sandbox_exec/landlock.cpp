#include "landlock.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "namespaces.hpp"
#include "qk/util/unique_fd.hpp"

// Newer than the kernel headers Debian 12 ships.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

namespace qk::sandbox_exec {

namespace {

using Access = std::uint64_t;

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
        access &= handled_;
        if (!S_ISDIR(st.st_mode))
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

// Everything outside the workspace: each entry beside each ancestor of the root, with every right.
Step allow_outside(Ruleset& rules, const std::string& root)
{
    std::string dir = "/";
    std::size_t pos = 1;
    while (pos < root.size()) {
        std::size_t slash = root.find('/', pos);
        std::string next = root.substr(pos, slash == std::string::npos ? std::string::npos : slash - pos);
        DIR* d = ::opendir(dir.c_str());
        if (!d)
            return setup_error("landlock-rule", "cannot list " + dir);
        UniqueFd dfd(::dup(::dirfd(d)));
        while (dirent* e = ::readdir(d)) {
            std::string_view name = e->d_name;
            if (name == "." || name == ".." || name == next)
                continue;
            // A link is left out: it may lead back to an ancestor of the workspace (pytest's
            // pytest-current), whose rule would allow the workspace whole. What links lead to outside the
            // workspace lies beside one of its ancestors, and is allowed there.
            UniqueFd fd(::openat(dfd.get(), e->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
            struct stat st {};
            if (!fd.valid() || ::fstat(fd.get(), &st) != 0 || S_ISLNK(st.st_mode))
                continue;
            if (auto err = rules.add(fd.get(), rules.handled(), dir + std::string(name))) {
                ::closedir(d);
                return err;
            }
        }
        ::closedir(d);
        dir += (dir == "/" ? "" : "/") + next;
        if (slash == std::string::npos)
            break;
        pos = slash + 1;
    }
    return std::nullopt;
}

}  // namespace

Step restrict_self(const enforce::SandboxPlan& plan, LandlockCounts& counts)
{
    int why = 0;
    counts.abi = landlock_abi(&why);
    if (counts.abi == 0)
        return SetupError{"landlock", why,
                          why == EOPNOTSUPP ? "Landlock is built into the kernel but not enabled: add landlock to the "
                                              "kernel's lsm= boot parameter"
                                            : "this kernel has no Landlock (Linux 5.13 or later, CONFIG_SECURITY_LANDLOCK)"};
    Access handled = kRead;
    if (counts.abi >= 2)
        handled |= LANDLOCK_ACCESS_FS_REFER;  // denied unless handled and granted: cross-directory renames
    if (!plan.overlay) {
        handled |= kWrite;
        if (counts.abi < 3)
            handled &= ~static_cast<Access>(LANDLOCK_ACCESS_FS_TRUNCATE);
    }
    struct landlock_ruleset_attr attr {};
    attr.handled_access_fs = handled;
    UniqueFd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)));
    if (!ruleset.valid())
        return setup_error("landlock-ruleset", "cannot create a Landlock ruleset");
    Ruleset rules(ruleset.get(), handled, counts);

    if (auto e = allow_outside(rules, plan.root))
        return e;
    UniqueFd root(::open(plan.root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid())
        return setup_error("landlock-rule", "cannot open the workspace " + plan.root);
    // Renames and links across directories of the workspace, as long as a file gains no read right.
    if (auto e = rules.add(root.get(), LANDLOCK_ACCESS_FS_REFER, plan.root))
        return e;
    const Access read_write = plan.overlay ? kRead | LANDLOCK_ACCESS_FS_REFER : handled;
    // Over a read mask the merged tree holds only what the task may read and what it made: allowed
    // whole, so a file the command creates anywhere is its own to read back.
    if (plan.read_mask) {
        if (auto e = rules.add(root.get(), kRead | LANDLOCK_ACCESS_FS_REFER, plan.root))
            return e;
    }
    for (const auto& g : plan.read_mask ? std::vector<enforce::SandboxPlan::Grant>{} : plan.grants) {
        UniqueFd fd = open_beneath(root.get(), g.path);
        if (!fd.valid()) {
            ++counts.missing;  // gone since qk walked it, or a link now stands on the way
            continue;
        }
        Access access = g.access == enforce::SandboxPlan::Grant::Access::read ? kRead : read_write;
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
