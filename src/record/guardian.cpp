#include "qk/record/guardian.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include <fmt/core.h>

namespace qk::record::guardian {
namespace {

// The guardian's tables live in static memory: it is forked from a process with other threads, so
// after fork it may call only async-signal-safe functions (no malloc, no lock another thread held).
constexpr int kMaxGroups = 4096;
constexpr int kMaxCgroups = 512;
constexpr int kPathMax = 512;

pid_t g_groups[kMaxGroups];
char g_cgroups[kMaxCgroups][kPathMax];
char g_line[kPathMax + 8];
char g_buf[8192];
char g_tree[kPathMax];

std::once_flag g_started;
int g_socket = -1;  // qk's end, held by qk alone (close-on-exec)
std::string g_status;

void remember_group(pid_t pgid, bool add)
{
    for (pid_t& slot : g_groups)
        if (add ? slot == 0 : slot == pgid) {
            slot = add ? pgid : 0;
            return;
        }
}

void remember_cgroup(const char* path, bool add)
{
    for (auto& slot : g_cgroups)
        if (add ? slot[0] == 0 : std::strcmp(slot, path) == 0) {
            if (add) {
                // Never cut short: a prefix of a cgroup's path names another cgroup (its parent, say).
                const std::size_t n = std::strlen(path);
                if (n >= static_cast<std::size_t>(kPathMax))
                    return;
                std::memcpy(slot, path, n + 1);
            } else {
                slot[0] = 0;
            }
            return;
        }
}

// One message: "G+<pgid>", "G-<pgid>", "C+<path>" or "C-<path>".
void apply(const char* line)
{
    if (line[0] == 0 || line[1] == 0)
        return;
    bool add = line[1] == '+';
    if (line[0] == 'G') {
        long pgid = 0;
        for (const char* p = line + 2; *p >= '0' && *p <= '9'; p++)
            pgid = pgid * 10 + (*p - '0');
        if (pgid > 1)
            remember_group(static_cast<pid_t>(pgid), add);
    } else if (line[0] == 'C' && line[2] == '/') {
        remember_cgroup(line + 2, add);
    }
}

// `path` then `suffix` into `out`, or false when they do not fit (never cut short). No allocation and
// no locks: the guardian is forked from a threaded qk and never execs.
template <std::size_t N>
bool join(char (&out)[N], const char* path, const char* suffix)
{
    const std::size_t a = std::strlen(path), b = std::strlen(suffix);
    if (a + b >= N)
        return false;
    std::memcpy(out, path, a);
    std::memcpy(out + a, suffix, b + 1);
    return true;
}

void kill_cgroup(const char* path)
{
    char file[kPathMax + 16];
    if (!join(file, path, "/cgroup.kill"))
        return;
    int fd = ::open(file, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        bool done = ::write(fd, "1", 1) == 1;
        ::close(fd);
        if (done)
            return;
    }
    // Before Linux 5.14: each process listed, a few rounds for what forked meanwhile.
    if (!join(file, path, "/cgroup.procs"))
        return;
    for (int round = 0; round < 8; round++) {
        fd = ::open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
            return;
        ssize_t n = ::read(fd, g_buf, sizeof(g_buf) - 1);
        ::close(fd);
        if (n <= 0)
            return;
        long pid = 0;
        for (ssize_t i = 0; i < n; i++) {
            if (g_buf[i] >= '0' && g_buf[i] <= '9') {
                pid = pid * 10 + (g_buf[i] - '0');
            } else {
                if (pid > 1)
                    ::kill(static_cast<pid_t>(pid), SIGKILL);
                pid = 0;
            }
        }
    }
}

long now_ms()
{
    struct timespec ts {};
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// Waits until cgroup.events says "populated 0" (true), or the deadline passes, or the cgroup is gone.
// cgroup.events wakes POLLPRI pollers when it changes, once read since the last change: read, poll,
// read again. Each round kills again: before cgroup.kill (Linux 5.14) a process may have forked.
bool wait_empty(const char* path, long deadline)
{
    char file[kPathMax + 16];
    if (!join(file, path, "/cgroup.events"))
        return false;
    int fd = ::open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT;
    bool empty = false;
    for (;;) {
        ssize_t n = ::pread(fd, g_buf, sizeof(g_buf) - 1, 0);
        if (n < 0) {
            empty = errno == ENODEV;  // removed meanwhile
            break;
        }
        g_buf[n] = 0;
        if (std::strstr(g_buf, "populated 0")) {
            empty = true;
            break;
        }
        long left = deadline - now_ms();
        if (left <= 0)
            break;
        kill_cgroup(path);
        struct pollfd p {fd, POLLPRI, 0};
        ::poll(&p, 1, static_cast<int>(left < 100 ? left : 100));
    }
    ::close(fd);
    return empty;
}

// Into the first child directory of g_tree, if it has one and its path fits.
bool descend()
{
    int fd = ::open(g_tree, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return false;
    bool found = false;
    for (;;) {
        long n = ::syscall(SYS_getdents64, fd, g_buf, sizeof(g_buf));
        if (n <= 0)
            break;
        for (long at = 0; at < n && !found;) {
            auto* entry = reinterpret_cast<struct dirent64*>(g_buf + at);
            at += entry->d_reclen;
            const char* name = entry->d_name;
            if (entry->d_type != DT_DIR || std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0)
                continue;
            std::size_t used = std::strlen(g_tree);
            if (used + 1 + std::strlen(name) >= sizeof(g_tree))
                continue;
            g_tree[used] = '/';
            std::memcpy(g_tree + used + 1, name, std::strlen(name) + 1);  // it fits: checked above
            found = true;
        }
        if (found)
            break;
    }
    ::close(fd);
    return found;
}

// Removes an emptied cgroup and the cgroups a command made below it, children first, without a
// directory iterator's allocations.
void remove_tree(const char* path)
{
    if (!join(g_tree, path, ""))
        return;
    const std::size_t root = std::strlen(path);
    for (int step = 0; step < 100000; step++) {
        if (::rmdir(g_tree) == 0 || errno == ENOENT) {
            if (std::strlen(g_tree) <= root)
                return;
            *std::strrchr(g_tree, '/') = 0;  // back to its parent, to remove it next
            continue;
        }
        // EBUSY: a child cgroup (go into it), or processes that would not die (leave it to the next run).
        if (errno != EBUSY && errno != ENOTEMPTY)
            return;
        if (!descend())
            return;
    }
}

[[noreturn]] void guard(int in)
{
    (void)::prctl(PR_SET_NAME, "qk-guardian", 0, 0, 0);  // the name ps shows, nothing more
    // ^C and the terminal's hangup are for qk, which stops its tasks itself; the guardian acts only
    // once qk is gone.
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU})
        ::sigaction(sig, &ign, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::size_t used = 0;
    for (;;) {
        ssize_t n = ::read(in, g_buf, sizeof(g_buf));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n; i++) {
            if (g_buf[i] != '\n') {
                if (used < sizeof(g_line) - 1)
                    g_line[used++] = g_buf[i];
                continue;
            }
            g_line[used] = 0;
            apply(g_line);
            used = 0;
        }
    }
    for (pid_t pgid : g_groups)
        if (pgid > 1)
            ::kill(-pgid, SIGKILL);
    for (const auto& path : g_cgroups)
        if (path[0])
            kill_cgroup(path);
    // Then each cgroup goes, once empty: nothing of the run is left for the next one to find. What would
    // not die within the time is left, cgroup and all, for the next run's reaper to kill and report.
    const long deadline = now_ms() + 5000;
    for (const auto& path : g_cgroups)
        if (path[0] && wait_empty(path, deadline))
            remove_tree(path);
    ::_exit(0);
}

// Forks the guardian, twice so that it is nobody's child of ours to reap and never shows up in a
// wait for our own children.
void start()
{
    // A packet socket, not a pipe: each message arrives whole, and a guardian that died makes send
    // fail (MSG_NOSIGNAL) instead of raising SIGPIPE in qk.
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0) {
        g_status = fmt::format("cannot make the guardian's socket: {}", std::strerror(errno));
        return;
    }
    pid_t child = ::fork();
    if (child < 0) {
        g_status = fmt::format("cannot start the guardian: {}", std::strerror(errno));
        ::close(fds[0]);
        ::close(fds[1]);
        return;
    }
    if (child == 0) {
        if (::fork() != 0)
            ::_exit(0);
        // Only its own end stays: a copy of qk's end, or of a file qk holds locked, would keep
        // the guardian from ever seeing qk go, or keep qk's locks held after it died.
        int devnull = ::open("/dev/null", O_RDWR);
        for (int fd = 0; fd < 3; fd++)
            if (devnull >= 0 && devnull != fd && ::dup2(devnull, fd) < 0)
                ::_exit(1);  // as for fd 3 below: no guardian, rather than one holding qk's pipes open
        ::close(fds[1]);
        if (fds[0] != 3 && ::dup2(fds[0], 3) < 0)
            ::_exit(1);
        if (::syscall(SYS_close_range, 4U, ~0U, 0U) != 0) {  // before Linux 5.9: one by one
            const long max = ::sysconf(_SC_OPEN_MAX);
            for (int fd = 4; fd < (max > 0 && max < 65536 ? max : 65536); ++fd)
                ::close(fd);
        }
        if (::setpgid(0, 0) != 0)  // a stop of qk's process group (^Z, a job-control kill) is not for it
            ::_exit(1);
        guard(3);
    }
    ::close(fds[0]);
    int status;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    g_socket = fds[1];
}

std::atomic<bool> g_used{false};
// The cgroups registered and not yet forgotten, on qk's side (the guardian never touches them).
std::mutex g_watched_mutex;
std::set<std::string> g_watched;

void send(char kind, char op, const std::string& what)
{
    if (op == '-' && !g_used.load())
        return;  // nothing was registered: no reason to start it
    std::call_once(g_started, [] {
        start();
        g_used = true;
    });
    if (g_socket < 0)
        return;
    std::string line = fmt::format("{}{}{}\n", kind, op, what);
    // Never blocks: a guardian that stopped reading costs its protection, not the run.
    (void)!::send(g_socket, line.data(), line.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

}  // namespace

void watch_process_group(pid_t pgid) { send('G', '+', std::to_string(pgid)); }
void forget_process_group(pid_t pgid) { send('G', '-', std::to_string(pgid)); }
Status watch_cgroup(const std::string& path)
{
    // Counted on qk's side: the guardian cannot answer, and would drop what does not fit without a word.
    if (path.size() >= static_cast<std::size_t>(kPathMax))
        return error(fmt::format("the cgroup path {} is {} bytes; qk's guardian holds paths under {} bytes, to "
                                 "kill a task's processes should qk be killed: mount cgroup2 at a shorter path",
                                 path, path.size(), kPathMax));
    {
        std::lock_guard lock(g_watched_mutex);
        if (g_watched.size() >= static_cast<std::size_t>(kMaxCgroups))
            return error(fmt::format("{} task cgroups at once is the most qk's guardian holds, to kill their "
                                     "processes should qk be killed: run fewer tasks at once (--parallel)",
                                     kMaxCgroups));
        g_watched.insert(path);
    }
    send('C', '+', path);
    return {};
}

void forget_cgroup(const std::string& path)
{
    {
        std::lock_guard lock(g_watched_mutex);
        if (g_watched.erase(path) == 0)
            return;  // never registered: nothing to tell
    }
    send('C', '-', path);
}

std::string guardian_status()
{
    return g_status;
}

}  // namespace qk::record::guardian
