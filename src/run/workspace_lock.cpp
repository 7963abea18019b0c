#include "workspace_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "qk/util/io.hpp"

namespace qk::run {

Result<WorkspaceLock> WorkspaceLock::acquire(const std::filesystem::path& root, const Options& options)
{
    // .qk is LocalCache::open's to make (it writes the .gitignore of a .qk it made): opened after it.
    const std::string path = (root / ".qk" / "run.lock").string();
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!fd.valid())
        return sys_error(fmt::format("cannot open the workspace lock {}", path));
    bool told = false;
    for (;;) {
        if (::flock(fd.get(), LOCK_EX | LOCK_NB) == 0)
            break;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return sys_error(fmt::format("cannot lock {}", path));
        std::string pid;
        if (auto text = read_file(path); text && !text->empty())
            pid = text->substr(0, text->find('\n'));
        std::string holder = pid.empty() ? "" : fmt::format(" (pid {})", pid);
        if (!options.wait)
            return error(fmt::format("another qk run is running in this workspace{}: wait for it to end, or run "
                                     "again without --no-wait to wait for it",
                                     holder));
        if (!told && options.waiting) {
            options.waiting(fmt::format("qk: another qk run is running in this workspace{}; waiting for it to end "
                                        "(--no-wait fails instead)\n",
                                        holder));
            told = true;
        }
        if (int sig = options.interrupted ? options.interrupted->load() : 0) {
            const char* name = ::sigabbrev_np(sig);
            return error(fmt::format("stopped by {} while waiting for the workspace lock held by {}: no task ran",
                                     name ? fmt::format("SIG{}", name) : fmt::format("signal {}", sig),
                                     pid.empty() ? "another qk run" : fmt::format("another qk run (pid {})", pid)));
        }
        // flock has no timeout; a short poll keeps Ctrl-C effective while waiting.
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::string pid = fmt::format("{}\n", ::getpid());
    if (::ftruncate(fd.get(), 0) == 0)
        (void)::pwrite(fd.get(), pid.data(), pid.size(), 0);
    return WorkspaceLock(std::move(fd));
}

}  // namespace qk::run
