// The run's filtering proxy: one thread accepts the helpers' hand-overs on a unix socket and the commands'
// connections on the listeners they handed over; each connection is served by a thread of its own
// (network_relay.cpp), which asks the task's list for every request.
#include "qk/enforce/network_proxy.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <fmt/format.h>

#include "network_relay.hpp"
#include "qk/util/fd_passing.hpp"
#include "qk/util/io.hpp"

namespace qk::enforce {

struct Task {
    std::shared_ptr<detail::RelayTask> relay;
    std::vector<NetworkRefusal> refusals;
};

// A listener a helper handed over, served while `helper` (the connection it came on) stays open.
struct Served {
    UniqueFd helper, listener;
    std::shared_ptr<detail::RelayTask> task;
};

struct NetworkProxy::State {
    std::string path;
    UniqueFd control, stop;
    std::mutex mutex;
    std::map<std::string, Task, std::less<>> tasks;
    std::condition_variable relays_done;
    std::size_t relays = 0;
    std::thread thread;

    void serve();
    void hand_over(std::vector<UniqueFd>& pending, std::size_t i, std::vector<Served>& served);
    void start_relay(UniqueFd client, std::shared_ptr<detail::RelayTask> task);
};

namespace {

std::string random_token()
{
    std::random_device rd;
    return fmt::format("{:08x}{:08x}{:08x}{:08x}", rd(), rd(), rd(), rd());
}

}  // namespace

void NetworkProxy::State::start_relay(UniqueFd client, std::shared_ptr<detail::RelayTask> task)
{
    {
        std::lock_guard lock(mutex);
        ++relays;
    }
    // Detached: the destructor waits for `relays` to reach 0, after `stop` told each to end.
    std::thread([this, fd = client.release(), task = std::move(task)] {
        detail::relay_connection(UniqueFd(fd), *task, stop.get());
        std::lock_guard lock(mutex);
        if (--relays == 0)
            relays_done.notify_all();
    }).detach();
}

void NetworkProxy::State::hand_over(std::vector<UniqueFd>& pending, std::size_t i, std::vector<Served>& served)
{
    UniqueFd helper = std::move(pending[i]);
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    UniqueFd listener;
    std::string hello = receive_with_fd(helper.get(), listener, 256, MSG_DONTWAIT);
    auto refuse = [&](std::string_view why) { (void)write_all(helper.get(), fmt::format("refused {}\n", why)); };
    if (!hello.starts_with(kProxyHello) || !hello.ends_with('\n') || !listener.valid())
        return refuse("not a hand-over of a listening socket");
    std::string_view token = std::string_view(hello).substr(kProxyHello.size());
    token.remove_suffix(1);
    std::shared_ptr<detail::RelayTask> task;
    {
        std::lock_guard lock(mutex);
        if (auto it = tasks.find(token); it != tasks.end())
            task = it->second.relay;
    }
    if (!task)
        return refuse("no task of this run has that token");
    if (!write_all(helper.get(), kProxyOk))
        return;
    served.push_back({std::move(helper), std::move(listener), std::move(task)});
}

void NetworkProxy::State::serve()
{
    std::vector<UniqueFd> pending;  // helpers connected, their hand-over not read yet
    std::vector<Served> served;
    for (;;) {
        std::vector<pollfd> fds{{stop.get(), POLLIN, 0}, {control.get(), POLLIN, 0}};
        for (const UniqueFd& p : pending)
            fds.push_back({p.get(), POLLIN, 0});
        for (const Served& s : served) {
            fds.push_back({s.helper.get(), POLLIN, 0});
            fds.push_back({s.listener.get(), POLLIN, 0});
        }
        if (retry_eintr([&] { return ::poll(fds.data(), fds.size(), -1); }) < 0 || fds[0].revents)
            return;
        // Served first, by index into `fds` as built: the hand-overs below change `pending` and `served`.
        const std::size_t base = 2 + pending.size();
        for (std::size_t i = served.size(); i-- > 0;) {
            if (fds[base + 2 * i + 1].revents & POLLIN) {
                UniqueFd client(::accept4(served[i].listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
                if (client.valid())
                    start_relay(std::move(client), served[i].task);
            }
            if (fds[base + 2 * i].revents)  // the helper ended (or said more than it may): its listener goes
                served.erase(served.begin() + static_cast<std::ptrdiff_t>(i));
        }
        for (std::size_t i = pending.size(); i-- > 0;)
            if (fds[2 + i].revents)
                hand_over(pending, i, served);
        if (fds[1].revents & POLLIN) {
            UniqueFd helper(::accept4(control.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (helper.valid())
                pending.push_back(std::move(helper));
        }
    }
}

Result<std::unique_ptr<NetworkProxy>> NetworkProxy::start(const std::string& socket_path)
{
    auto state = std::make_shared<State>();
    state->path = socket_path;
    sockaddr_un addr {};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path)
        return error(fmt::format("the network proxy's socket path is too long for a unix socket: {}", socket_path));
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    state->control.reset(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!state->control.valid())
        return sys_error("cannot make the network proxy's socket");
    (void)::unlink(socket_path.c_str());  // one a killed run left; the run's directory is its own
    if (::bind(state->control.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::chmod(socket_path.c_str(), 0600) != 0 || ::listen(state->control.get(), SOMAXCONN) != 0)
        return sys_error(fmt::format("cannot listen on {} for the network proxy", socket_path));
    state->stop.reset(::eventfd(0, EFD_CLOEXEC));
    if (!state->stop.valid())
        return sys_error("cannot make the network proxy's stop event");
    state->thread = std::thread([s = state.get()] { s->serve(); });
    return std::unique_ptr<NetworkProxy>(new NetworkProxy(std::move(state)));
}

NetworkProxy::NetworkProxy(std::shared_ptr<State> state) : state_(std::move(state)) {}

NetworkProxy::~NetworkProxy()
{
    const std::uint64_t one = 1;
    (void)!::write(state_->stop.get(), &one, sizeof one);  // an eventfd write of 1 fails only on overflow
    state_->thread.join();
    std::unique_lock lock(state_->mutex);
    state_->relays_done.wait(lock, [&] { return state_->relays == 0; });
    lock.unlock();
    (void)::unlink(state_->path.c_str());  // the run's directory goes too; this is for a proxy of a test
}

const std::string& NetworkProxy::socket_path() const
{
    return state_->path;
}

std::string NetworkProxy::add_task(std::string task_id, std::string declaration, Allows allows)
{
    std::string token = random_token();
    auto relay = std::make_shared<detail::RelayTask>();
    relay->task_id = std::move(task_id);
    relay->declaration = std::move(declaration);
    relay->allows = std::move(allows);
    // The refusal is kept under the token while the task is known; a connection that outlives it is still refused.
    relay->refused = [state = state_.get(), token](NetworkRefusal r) {
        std::lock_guard lock(state->mutex);
        if (auto it = state->tasks.find(token); it != state->tasks.end())
            it->second.refusals.push_back(std::move(r));
    };
    std::lock_guard lock(state_->mutex);
    state_->tasks[token] = Task{std::move(relay), {}};
    return token;
}

std::vector<NetworkRefusal> NetworkProxy::remove_task(const std::string& token)
{
    std::lock_guard lock(state_->mutex);
    auto it = state_->tasks.find(token);
    if (it == state_->tasks.end())
        return {};
    std::vector<NetworkRefusal> out = std::move(it->second.refusals);
    state_->tasks.erase(it);
    return out;
}

}  // namespace qk::enforce
