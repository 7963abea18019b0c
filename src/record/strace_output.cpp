#include "strace_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string_view>
#include <utility>

#include <fmt/core.h>

namespace qk::record {
namespace {

namespace fs = std::filesystem;

// Whether `pid` is traced by `tracer` now: the parser's list of live processes may lag behind
// strace, so without a cgroup a pid is checked before it is killed, lest it was reused meanwhile.
bool traced_by(pid_t pid, pid_t tracer)
{
    std::ifstream status("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("TracerPid:")) {
            std::string_view v = std::string_view(line).substr(10);
            v.remove_prefix(std::min(v.find_first_not_of(" \t"), v.size()));
            pid_t p = 0;
            return std::from_chars(v.data(), v.data() + v.size(), p).ec == std::errc() && p == tracer;
        }
    return false;
}

}  // namespace

std::vector<pid_t> tracees_of(pid_t tracer)
{
    std::vector<pid_t> pids;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator("/proc", ec)) {
        std::string name = entry.path().filename().string();
        if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        pid_t pid = 0;
        if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc())
            continue;  // more digits than a pid has
        if (traced_by(pid, tracer))
            pids.push_back(pid);
    }
    return pids;
}

namespace {

constexpr std::string_view kFifoDir = "qk-strace-";
constexpr std::string_view kNewFifoDir = "qk-strace-new-";

// Removes the FIFO directories that qk runs killed outright left in `tmp`: those of this user that no
// living owner holds locked. Only the FIFO itself and the directory go, never anything else in it.
void remove_stale_fifos(const fs::path& tmp)
{
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(tmp, ec)) {
        std::string name = entry.path().filename().string();
        if (!name.starts_with(kFifoDir) || name.starts_with(kNewFifoDir) || name.size() != kFifoDir.size() + 6)
            continue;
        UniqueFd dir(::open(entry.path().c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        struct stat st {};
        if (!dir.valid() || ::fstat(dir.get(), &st) != 0 || st.st_uid != ::geteuid() ||
            ::flock(dir.get(), LOCK_EX | LOCK_NB) != 0)
            continue;
        ::unlinkat(dir.get(), "output", 0);
        ::rmdir(entry.path().c_str());
    }
}

}  // namespace

Result<StraceOutputFifo> StraceOutputFifo::create()
{
    const fs::path tmp = fs::temp_directory_path();
    static std::once_flag cleaned;
    std::call_once(cleaned, [&tmp] { remove_stale_fifos(tmp); });
    // Made under a name no cleaner takes, locked, then renamed: a directory that bears the cleaner's
    // name is always locked while its owner lives.
    std::string staged = (tmp / (std::string(kNewFifoDir) + "XXXXXX")).string();
    if (!::mkdtemp(staged.data()))
        return sys_error("cannot create a temporary directory for strace's output");
    StraceOutputFifo f;
    f.lock_.reset(::open(staged.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    std::string dir = (tmp / (std::string(kFifoDir) + staged.substr(staged.size() - 6))).string();
    if (!f.lock_.valid() || ::flock(f.lock_.get(), LOCK_EX) != 0 ||
        ::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) != 0) {
        auto e = sys_error("cannot set up a temporary directory for strace's output in " + tmp.string());
        ::rmdir(staged.c_str());
        return e;
    }
    f.dir_ = dir;
    f.path_ = dir + "/output";
    if (::mkfifo(f.path_.c_str(), 0600) != 0)
        return sys_error("cannot create the FIFO " + f.path_);
    // Opening the read end first, without blocking, lets our own write end open at once.
    f.read_.reset(::open(f.path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    f.hold_.reset(::open(f.path_.c_str(), O_WRONLY | O_CLOEXEC));
    if (!f.read_.valid() || !f.hold_.valid() || ::fcntl(f.read_.get(), F_SETFL, 0) != 0)
        return sys_error("cannot open the FIFO " + f.path_);
    return f;
}

StraceOutputFifo::StraceOutputFifo(StraceOutputFifo&& o) noexcept
    : dir_(std::exchange(o.dir_, {})), path_(std::move(o.path_)), lock_(std::move(o.lock_)), read_(std::move(o.read_)),
      hold_(std::move(o.hold_))
{
}

StraceOutputFifo::~StraceOutputFifo()
{
    if (!dir_.empty()) {
        ::unlink(path_.c_str());
        ::rmdir(dir_.c_str());
    }
}

void StraceOutputReader::run(int fd)
{
    std::string buf;
    std::size_t scanned = 0;
    char chunk[1 << 16];
    for (;;) {
        if (root_ended_) {
            // strace waits for every tracee: kill again what appeared since, while it waits.
            struct pollfd p {fd, POLLIN, 0};
            if (::poll(&p, 1, 100) == 0) {
                kill_leftovers();
                continue;
            }
        }
        ssize_t n = ::read(fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        buf.append(chunk, static_cast<std::size_t>(n));
        std::size_t start = 0;
        for (std::size_t nl; (nl = buf.find('\n', scanned)) != std::string::npos; scanned = start) {
            feed(std::string_view(buf).substr(start, nl - start));
            start = nl + 1;
        }
        buf.erase(0, start);
        scanned = buf.size();
    }
    if (!buf.empty())
        feed(buf);  // strace died mid-line: the parser will say so
    note(parser_.finish());
    announce(true);
}

bool StraceOutputReader::wait_root_started()
{
    std::unique_lock lock(start_mutex_);
    start_cv_.wait(lock, [this] { return root_started_ || output_ended_; });
    return root_started_;
}

void StraceOutputReader::announce(bool ended)
{
    {
        std::lock_guard lock(start_mutex_);
        root_started_ |= parser_.root_pid() != 0;
        output_ended_ |= ended;
    }
    start_cv_.notify_all();
}

void StraceOutputReader::feed(std::string_view line)
{
    try {
        note(parser_.feed(line));
        if (!root_announced_ && parser_.root_pid()) {
            root_announced_ = true;
            announce(false);
        }
        if (!root_ended_ && parser_.root_wait_status()) {
            root_ended_ = true;
            kill_leftovers();
        }
    } catch (const std::exception& e) {
        note(error(fmt::format("the strace parser failed: {}", e.what())));
    }
}

void StraceOutputReader::note(const Status& s)
{
    if (!s.ok() && errors_++ == 0)
        first_error_ = s.error();
}

void StraceOutputReader::kill_leftovers()
{
    // strace itself must live on to report their ends. Rounds until one finds nobody new: a process
    // killed while forking may leave a child behind.
    // A process that moved itself out of the cgroup is still traced: the parser's list finds it.
    for (int round = 0; round < 100; round++) {
        bool any = false;
        std::vector<pid_t> in_cgroup = cgroup_ ? cgroup_->pids() : std::vector<pid_t>();
        std::set<pid_t> in_cgroup_set(in_cgroup.begin(), in_cgroup.end());
        std::vector<pid_t> candidates = in_cgroup;
        for (pid_t pid : parser_.live_processes())
            if (!in_cgroup_set.contains(pid))
                candidates.push_back(pid);
        for (pid_t pid : candidates) {
            if (pid == strace_pid_ || pid == parser_.root_pid() || killed_.contains(pid))
                continue;
            if (!in_cgroup_set.contains(pid) && !traced_by(pid, strace_pid_))
                continue;
            killed_.insert(pid);
            ::kill(pid, SIGKILL);
            any = true;
        }
        if (!any || !cgroup_)
            break;
    }
}

}  // namespace qk::record
