#include "qk/record/cgroup.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <set>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/core.h>

#include "qk/record/guardian.hpp"
#include "qk/record/launcher.hpp"

namespace qk::record {
namespace fs = std::filesystem;

Result<std::string> cgroup2_mount()
{
    std::ifstream in("/proc/self/mountinfo");
    std::string line;
    while (std::getline(in, line)) {
        // id parent major:minor root mountpoint options... - fstype source superoptions
        auto dash = line.find(" - ");
        if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0)
            continue;
        std::istringstream fields(line.substr(0, dash));
        std::string id, parent, dev, root, mountpoint;
        fields >> id >> parent >> dev >> root >> mountpoint;
        return mountpoint;
    }
    return error("no cgroup2 filesystem is mounted (see /proc/self/mountinfo): mount one with "
                 "'mount -t cgroup2 none /sys/fs/cgroup' to record with eBPF");
}

namespace {

// Paths of the cgroups alive in this process, for kill_all_task_cgroups().
std::mutex g_live_mutex;
std::set<std::string> g_live;

std::vector<pid_t> pids_at(const fs::path& root)
{
    std::vector<pid_t> pids;
    std::error_code ec;
    auto read_procs = [&pids](const fs::path& dir) {
        std::ifstream procs(dir / "cgroup.procs");
        for (pid_t pid; procs >> pid;)
            pids.push_back(pid);
    };
    read_procs(root);
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_directory(ec))
            read_procs(it->path());
    return pids;
}

int count_processes_at(const fs::path& root) { return static_cast<int>(pids_at(root).size()); }

void kill_cgroup_at(const fs::path& path)
{
    std::ofstream kill(path / "cgroup.kill");
    if (kill) {
        kill << "1";
        kill.flush();
    }
    if (kill)
        return;
    // Before Linux 5.14: signal each process we can see, repeatedly, as forks may race us.
    for (int round = 0; round < 100 && count_processes_at(path) > 0; round++) {
        std::ifstream procs(path / "cgroup.procs");
        pid_t pid;
        while (procs >> pid)
            ::kill(pid, SIGKILL);
    }
}

Status wait_empty_at(const std::string& path, std::chrono::milliseconds timeout)
{
    // cgroup.events wakes POLLPRI pollers when "populated" flips, once it has been read since the last
    // change: so read, then poll, then read again.
    // A cgroup removed meanwhile (by a killed run's guardian, as a reaper looks at it) is empty.
    UniqueFd events(::open((path + "/cgroup.events").c_str(), O_RDONLY | O_CLOEXEC));
    if (!events.valid() && errno == ENOENT)
        return {};
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        char buf[256];
        ssize_t n = events.valid() ? ::pread(events.get(), buf, sizeof(buf) - 1, 0) : -1;
        if (n < 0 && errno == ENODEV)
            return {};
        if (n < 0)
            return sys_error("cannot read " + path + "/cgroup.events");
        buf[n] = 0;
        if (std::string_view(buf).find("populated 0") != std::string_view::npos)
            return {};
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return error(fmt::format("processes in {} did not exit within {} ms of being killed", path,
                                     timeout.count()));
        struct pollfd p {events.get(), POLLPRI, 0};
        ::poll(&p, 1, static_cast<int>(std::min<long>(left.count(), 100)));
    }
}

// Children first: a command may have made cgroups of its own below its task's.
void remove_tree_at(const std::string& path)
{
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_directory(ec))
            dirs.push_back(it->path());
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it)
        ::rmdir(it->c_str());
    ::rmdir(path.c_str());
}

// A task cgroup is named "<label>-<16 hex digits>", random: a pid names nothing unique across pid
// namespaces or after a reboot. Its owner holds an exclusive flock on the directory for as long as it
// lives, and creators hold a shared lock on the parent from mkdir until they hold theirs, so a reaper
// (exclusive on the parent) never mistakes a cgroup being made for one left behind.
bool is_task_cgroup_name(const std::string& name)
{
    auto dash = name.rfind('-');
    return dash != std::string::npos && dash > 0 && name.size() - dash - 1 == 16 &&
           name.find_first_not_of("0123456789abcdef", dash + 1) == std::string::npos;
}

Result<std::string> random_suffix()
{
    std::uint64_t r = 0;
    if (::getrandom(&r, sizeof(r), 0) != sizeof(r))
        return sys_error("cannot name a cgroup: getrandom failed");
    return fmt::format("{:016x}", r);
}

UniqueFd open_dir(const std::string& path)
{
    return UniqueFd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

LeftoverReport reap_stale_in(const std::string& parent)
{
    LeftoverReport report;
    UniqueFd parent_fd = open_dir(parent);
    if (!parent_fd.valid() || ::flock(parent_fd.get(), LOCK_EX) != 0)
        return report;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
        std::string name = entry.path().filename().string();
        if (!entry.is_directory(ec) || !is_task_cgroup_name(name))
            continue;
        UniqueFd dir = open_dir(entry.path());
        if (!dir.valid() || ::flock(dir.get(), LOCK_EX | LOCK_NB) != 0)
            continue;  // its owner lives
        // Usually empty: the killed run's guardian killed what ran in it (and removes it, maybe as we
        // look). Only what is there is killed and counted.
        int running = count_processes_at(entry.path());
        if (running > 0 || !wait_empty_at(entry.path(), std::chrono::milliseconds(0)))
            kill_cgroup_at(entry.path());
        if (wait_empty_at(entry.path(), std::chrono::seconds(5))) {
            report.removed++;
            report.killed += running;
        } else {
            report.still_running.push_back(entry.path().string());
        }
        remove_tree_at(entry.path());
    }
    return report;
}

}  // namespace

LeftoverReport reap_stale_task_cgroups()
{
    auto mount = cgroup2_mount();
    if (!mount)
        return {};
    return reap_stale_in(*mount + "/qk");
}

void kill_all_task_cgroups()
{
    std::lock_guard lock(g_live_mutex);
    for (const auto& path : g_live)
        kill_cgroup_at(path);
}

const char* read_only_groups_fix()
{
    return "give the container a writable cgroup filesystem (containerd's cgroup_writable, or a privileged "
           "container) to record with eBPF; strace records otherwise, following the process tree";
}

// A cgroup made and removed, as the eBPF recorder makes one per command: mounted is not enough.
CommandGroupsCheck check_command_groups()
{
    auto mount = cgroup2_mount();
    if (!mount)
        return {"cgroup2", false, mount.error().message,
                "mount the cgroup2 hierarchy (mount -t cgroup2 none /sys/fs/cgroup)"};
    auto probe = TaskCgroup::create("probe");
    if (probe)
        return {"cgroup2", true, "mounted at " + *mount + ", and a cgroup can be made there", {}};
    return {"cgroup2", false, probe.error().message,
            probe.error().sys_errno == EROFS ? read_only_groups_fix()
                                             : "run as root, or in a cgroup delegated to this user "
                                               "(systemd-run --scope -p Delegate=yes); strace records otherwise"};
}

TaskCgroup::TaskCgroup(TaskCgroup&& o) noexcept
    : path_(std::move(o.path_)), dir_(std::move(o.dir_)), id_(o.id_), level_(o.level_)
{
    o.path_.clear();
}

TaskCgroup& TaskCgroup::operator=(TaskCgroup&& o) noexcept
{
    if (this != &o) {
        destroy();
        path_ = std::move(o.path_);
        dir_ = std::move(o.dir_);
        id_ = o.id_;
        level_ = o.level_;
        o.path_.clear();
    }
    return *this;
}

TaskCgroup::~TaskCgroup() { destroy(); }

namespace {

// Why a cgroup could not be made, with what to do: a read-only cgroup filesystem is a container's
// default (Docker mounts it so), not a missing privilege.
Error cannot_create(const std::string& path)
{
    if (errno == EROFS)
        return sys_error(fmt::format("cannot create the cgroup {}: the cgroup filesystem is mounted read-only, as "
                                     "in a default container",
                                     path));
    return sys_error(fmt::format("cannot create the cgroup {} (qk needs root, or a delegated cgroup, to give each "
                                 "traced command a cgroup of its own)",
                                 path));
}

}  // namespace

Result<TaskCgroup> TaskCgroup::create(std::string_view label)
{
    QK_TRY(mount, cgroup2_mount());
    std::string parent = *mount + "/qk";
    if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST)
        return cannot_create(parent);
    static std::once_flag reaped;
    std::call_once(reaped, [&parent] { reap_stale_in(parent); });
    QK_TRY(suffix, random_suffix());
    TaskCgroup cg;
    std::string path = fmt::format("{}/{}-{}", parent, label, *suffix);
    {
        UniqueFd parent_fd = open_dir(parent);
        if (!parent_fd.valid() || ::flock(parent_fd.get(), LOCK_SH) != 0)
            return sys_error("cannot lock the cgroup " + parent);
        if (::mkdir(path.c_str(), 0755) != 0)
            return cannot_create(path);
        cg.path_ = path;
        cg.dir_ = open_dir(path);
        if (!cg.dir_.valid() || ::flock(cg.dir_.get(), LOCK_EX | LOCK_NB) != 0)
            return sys_error("cannot open and lock the cgroup " + path);
    }
    {
        std::lock_guard lock(g_live_mutex);
        g_live.insert(cg.path_);
    }
    QK_TRY_STATUS(guardian::watch_cgroup(cg.path_));  // on failure the cgroup is removed as cg goes
    struct stat st {};
    if (::fstat(cg.dir_.get(), &st) != 0)
        return sys_error("cannot open the cgroup " + cg.path_);
    cg.id_ = st.st_ino;  // kernfs: the inode number is the cgroup id
    // The hierarchy's root is the mount's root here; one level per directory below it.
    cg.level_ = 0;
    for (const auto& part : fs::path(cg.path_.substr(mount->size())))
        if (part != "/" && !part.empty())
            cg.level_++;
    return cg;
}

int TaskCgroup::count_processes() const { return count_processes_at(path_); }

std::vector<pid_t> TaskCgroup::pids() const { return pids_at(path_); }

int TaskCgroup::signal_all(int sig, pid_t except)
{
    if (sig == SIGKILL && except == 0)
        return kill_all();  // cgroup.kill, where it exists, wins the race against forks
    int n = 0;
    for (pid_t pid : pids_at(path_))
        if (pid != except && ::kill(pid, sig) == 0)
            n++;
    return n;
}

int TaskCgroup::kill_all()
{
    int n = count_processes();
    if (n > 0)
        kill_cgroup_at(path_);
    return n;
}

Status TaskCgroup::wait_empty(std::chrono::milliseconds timeout) { return wait_empty_at(path_, timeout); }

void TaskCgroup::destroy()
{
    if (path_.empty())
        return;
    if (count_processes() > 0) {
        kill_all();
        (void)wait_empty(std::chrono::seconds(5));
    }
    remove_tree_at(path_);
    guardian::forget_cgroup(path_);
    dir_.reset();  // the lock goes last: until the directory is gone, no reaper may take it for stale
    {
        std::lock_guard lock(g_live_mutex);
        g_live.erase(path_);
    }
    path_.clear();
}

}  // namespace qk::record
