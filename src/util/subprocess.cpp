#include "qk/util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "qk/util/unique_fd.hpp"

extern char** environ;

namespace qk {

bool Captured::succeeded() const
{
    return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0;
}

Result<Captured> run_captured(const std::vector<std::string>& argv, const CaptureOptions& options)
{
    if (argv.empty())
        return error("run_captured: no program given");
    using Stderr = CaptureOptions::Stderr;
    int out_fds[2], err_fds[2] = {-1, -1};
    if (::pipe2(out_fds, O_CLOEXEC) != 0)
        return sys_error("cannot create a pipe");
    UniqueFd out_read(out_fds[0]), out_write(out_fds[1]), err_read, err_write;
    if (options.stderr_to == Stderr::apart) {
        if (::pipe2(err_fds, O_CLOEXEC) != 0)
            return sys_error("cannot create a pipe");
        err_read = UniqueFd(err_fds[0]);
        err_write = UniqueFd(err_fds[1]);
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    if (!options.cwd.empty())
        posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
    posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
    if (options.stderr_to == Stderr::merged)
        posix_spawn_file_actions_adddup2(&actions, out_write.get(), 2);
    else if (options.stderr_to == Stderr::apart)
        posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    int err = options.search_path ? ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ)
                                  : ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (err != 0)
        return sys_error("cannot run " + argv[0], err);
    out_write.reset();
    err_write.reset();

    // Both pipes read as data comes: a child filling one while we wait on the other would block.
    Captured c;
    struct Stream {
        int fd;
        std::string* into;
    };
    std::vector<Stream> open{{out_read.get(), &c.out}};
    if (err_read.valid())
        open.push_back({err_read.get(), &c.err});
    char buf[65536];
    while (!open.empty()) {
        std::vector<pollfd> fds;
        for (const Stream& s : open)
            fds.push_back({s.fd, POLLIN, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        for (std::size_t i = fds.size(); i-- > 0;) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR)))
                continue;
            ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                open.erase(open.begin() + static_cast<std::ptrdiff_t>(i));
            else
                open[i].into->append(buf, static_cast<std::size_t>(n));
        }
    }
    // Closed before waiting: had poll failed, a child still writing would otherwise block on a full pipe
    // for ever; now it gets EPIPE.
    out_read.reset();
    err_read.reset();
    while (::waitpid(pid, &c.wait_status, 0) < 0 && errno == EINTR) {
    }
    return c;
}

}  // namespace qk
