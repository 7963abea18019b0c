#include "strace_output.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
        if (line.starts_with("TracerPid:"))
            return std::atoi(line.c_str() + 10) == tracer;
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
        pid_t pid = static_cast<pid_t>(std::atoi(name.c_str()));
        if (traced_by(pid, tracer))
            pids.push_back(pid);
    }
    return pids;
}

Result<StraceOutputFifo> StraceOutputFifo::create()
{
    StraceOutputFifo f;
    std::string tmpl = (fs::temp_directory_path() / "qk-strace-XXXXXX").string();
    if (!::mkdtemp(tmpl.data()))
        return sys_error("cannot create a temporary directory for strace's output");
    f.dir_ = tmpl;
    f.path_ = tmpl + "/output";
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
    : dir_(std::exchange(o.dir_, {})), path_(std::move(o.path_)), read_(std::move(o.read_)), hold_(std::move(o.hold_))
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
    for (int round = 0; round < 100; round++) {
        bool any = false;
        for (pid_t pid : cgroup_ ? cgroup_->pids() : parser_.live_processes()) {
            if (pid == strace_pid_ || pid == parser_.root_pid() || killed_.contains(pid))
                continue;
            if (!cgroup_ && !traced_by(pid, strace_pid_))
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
