#include "launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "qk/util/unique_fd.hpp"
#include "qk/record/process.hpp"

namespace qk::run {

// ---------------------------------------------------------------------------------------------------
// CancelToken

CancelToken::Watch::Watch(Watch&& o) noexcept : token_(std::exchange(o.token_, nullptr)), id_(o.id_) {}

CancelToken::Watch::~Watch()
{
    if (!token_)
        return;
    std::lock_guard lock(token_->mutex_);
    token_->stops_.erase(id_);
}

void CancelToken::cancel()
{
    // Stops are called under the lock so that none runs after its Watch is gone (the pid is reaped).
    std::lock_guard lock(mutex_);
    ++requests_;
    for (auto& [id, stop] : stops_)
        stop(requests_ > 1);
}

bool CancelToken::cancelled() const
{
    std::lock_guard lock(mutex_);
    return requests_ > 0;
}

CancelToken::Watch CancelToken::watch(StopFn stop)
{
    std::lock_guard lock(mutex_);
    std::size_t id = next_id_++;
    if (requests_ > 0)
        stop(requests_ > 1);
    stops_.emplace(id, std::move(stop));
    return Watch(this, id);
}

// ---------------------------------------------------------------------------------------------------
// ProcessLauncher

namespace {

std::string_view env_value(const std::vector<std::string>& env, std::string_view name)
{
    for (const auto& kv : env)
        if (kv.size() > name.size() && kv[name.size()] == '=' && kv.compare(0, name.size(), name) == 0)
            return std::string_view(kv).substr(name.size() + 1);
    return {};
}

// argv[0] as execvp would find it, but in the command's own PATH rather than ours.
Result<std::string> find_program(const std::string& name, const LaunchRequest& req)
{
    if (name.find('/') != std::string::npos)
        return name;
    std::string_view path = env_value(req.env, "PATH");
    if (path.empty())
        path = "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    for (;;) {
        std::size_t colon = path.find(':', start);
        std::string_view dir = path.substr(start, colon == std::string_view::npos ? colon : colon - start);
        // An empty entry means the current directory, as in execvp.
        std::string candidate = dir.empty() || dir.front() != '/' ? req.cwd + "/" : std::string();
        candidate.append(dir.empty() ? std::string_view(".") : dir).append("/").append(name);
        struct stat st {};
        if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
            return candidate;
        if (colon == std::string_view::npos)
            break;
        start = colon + 1;
    }
    return Error{fmt::format("cannot run {}: it is not in the PATH ({})", name, path), ENOENT};
}

struct FileActions {
    posix_spawn_file_actions_t a;
    FileActions() { posix_spawn_file_actions_init(&a); }
    ~FileActions() { posix_spawn_file_actions_destroy(&a); }
};

struct SpawnAttr {
    posix_spawnattr_t a;
    SpawnAttr() { posix_spawnattr_init(&a); }
    ~SpawnAttr() { posix_spawnattr_destroy(&a); }
};

Error spawn_error(const LaunchRequest& req, const std::string& program, int err)
{
    struct stat st {};
    if (::stat(req.cwd.c_str(), &st) != 0) {
        int stat_errno = errno;
        return sys_error(fmt::format("cannot run {} in {}: the working directory cannot be entered; check the "
                                     "target's cwd",
                                     req.argv[0], req.cwd),
                         stat_errno);
    }
    if (!S_ISDIR(st.st_mode))
        return sys_error(fmt::format("cannot run {} in {}: the working directory is not a directory; check the "
                                     "target's cwd",
                                     req.argv[0], req.cwd),
                         ENOTDIR);
    return sys_error(fmt::format("cannot run {}", program), err);
}

}  // namespace

Result<record::ExitStatus> ProcessLauncher::run(const LaunchRequest& req, CancelToken& cancel)
{
    if (req.argv.empty())
        return error("cannot run a command: it is empty");
    if (cancel.cancelled())
        return Error{fmt::format("{} was not started: the run is being cancelled", req.argv[0]), ECANCELED};
    Result<std::string> program = find_program(req.argv[0], req);
    if (!program)
        return program.error();

    // The child's own dup2 onto 1 and 2 would clobber an output fd that is itself 0, 1 or 2.
    UniqueFd moved_output;
    int output = req.output_fd;
    if (output >= 0 && output <= 2) {
        moved_output.reset(::fcntl(output, F_DUPFD_CLOEXEC, 3));
        if (!moved_output.valid()) {
            int err = errno;
            return sys_error(fmt::format("cannot run {}: cannot duplicate its output fd {}", req.argv[0], output), err);
        }
        output = moved_output.get();
    }

    FileActions actions;
    posix_spawn_file_actions_addopen(&actions.a, 0, "/dev/null", O_RDONLY, 0);
    if (output >= 0) {
        posix_spawn_file_actions_adddup2(&actions.a, output, 1);
        posix_spawn_file_actions_adddup2(&actions.a, output, 2);
    } else {
        posix_spawn_file_actions_addopen(&actions.a, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_adddup2(&actions.a, 1, 2);
    }
    posix_spawn_file_actions_addchdir_np(&actions.a, req.cwd.c_str());
    // Whatever other threads opened without O_CLOEXEC (another task's pipe) must not reach the command:
    // a pipe held open by an unrelated process never reaches end of file.
    posix_spawn_file_actions_addclosefrom_np(&actions.a, 3);

    SpawnAttr attr;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setflags(&attr.a, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr.a, 0);
    // qk blocks the signals it handles on a thread of its own and may ignore SIGPIPE: the command gets
    // neither.
    posix_spawnattr_setsigmask(&attr.a, &none);
    posix_spawnattr_setsigdefault(&attr.a, &all);

    std::vector<char*> argv, envp;
    for (const auto& a : req.argv)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : req.env)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    pid_t pid = -1;
    // glibc's posix_spawn returns only once the exec succeeded or failed, so the group exists now.
    int rc = ::posix_spawn(&pid, program->c_str(), &actions.a, &attr.a, argv.data(), envp.data());
    if (rc != 0)
        return spawn_error(req, *program, rc);

    {
        // The group is killed, not just the shell: `sh -c` leaves its children running otherwise.
        CancelToken::Watch watch = cancel.watch([pid](bool force) { ::kill(-pid, force ? SIGKILL : SIGTERM); });
        // Wait without reaping, so the pid (the group's id) cannot be reused while a stop may still
        // signal it; the Watch is gone before the reap below.
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) != 0) {
            if (int err = errno; err != EINTR)
                return sys_error(fmt::format("cannot wait for {} (pid {})", req.argv[0], pid), err);
        }
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (int err = errno; err != EINTR)
            return sys_error(fmt::format("cannot wait for {} (pid {})", req.argv[0], pid), err);
    }
    return record::exit_status_of(status);
}

}  // namespace qk::run
