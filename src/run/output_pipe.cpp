#include "output_pipe.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace qk::run {

namespace {
constexpr std::size_t kReadSize = std::size_t{64} * 1024;
// What finish() reads at most: a process left behind that writes without pause must not keep the
// task from ending.
constexpr std::size_t kDrainLimit = std::size_t{4} * 1024 * 1024;
}  // namespace

void TaskOutput::add(std::string_view piece)
{
    std::lock_guard lock(mutex_);
    raw_.append(piece);
    if (on_line_)
        on_line_(line_text(piece));
}

std::string TaskOutput::take()
{
    std::lock_guard lock(mutex_);
    return std::move(raw_);
}

Result<std::unique_ptr<OutputPipe>> OutputPipe::open(TaskOutput& output)
{
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0)
        return sys_error("cannot create a pipe for a command's output (too many open files? raise `ulimit -n`)");
    UniqueFd read(fds[0]), write(fds[1]);
    if (::fcntl(read.get(), F_SETFL, O_NONBLOCK) != 0)
        return sys_error("cannot make a command's output pipe non-blocking");
    UniqueFd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake.valid())
        return sys_error("cannot create an eventfd for a command's output");
    std::unique_ptr<OutputPipe> pipe(new OutputPipe(output, std::move(read), std::move(write), std::move(wake)));
    try {
        pipe->reader_ = std::thread([p = pipe.get()] { p->read_loop(); });
    } catch (const std::system_error& e) {
        return error(std::string("cannot start a thread to read a command's output: ") + e.what());
    }
    return pipe;
}

OutputPipe::OutputPipe(TaskOutput& output, UniqueFd read, UniqueFd write, UniqueFd wake)
    : output_(output), read_(std::move(read)), write_(std::move(write)), wake_(std::move(wake))
{
}

OutputPipe::~OutputPipe() { finish(); }

void OutputPipe::finish()
{
    write_.reset();
    if (!reader_.joinable())
        return;
    std::uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof(one));
    reader_.join();
}

void OutputPipe::read_loop()
{
    auto add = [this](std::string_view piece) { output_.add(piece); };
    for (;;) {
        pollfd fds[2] = {{read_.get(), POLLIN, 0}, {wake_.get(), POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        if (fds[1].revents) {
            // The command has exited: what it wrote is all in the pipe already.
            drain(kDrainLimit);
            break;
        }
        if (fds[0].revents && !drain(kReadSize))
            break;
    }
    splitter_.flush(add);
}

bool OutputPipe::drain(std::size_t limit)
{
    char buf[kReadSize];
    std::size_t total = 0;
    auto add = [this](std::string_view piece) { output_.add(piece); };
    while (total < limit) {
        ssize_t n = ::read(read_.get(), buf, sizeof(buf));
        if (n > 0) {
            splitter_.feed(std::string_view(buf, static_cast<std::size_t>(n)), add);
            total += static_cast<std::size_t>(n);
        } else if (n == 0) {
            return false;
        } else if (errno == EINTR) {
            continue;
        } else {
            return errno == EAGAIN;
        }
    }
    return true;
}

}  // namespace qk::run
