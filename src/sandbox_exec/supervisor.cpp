#include "supervisor.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/unique_fd.hpp"
#include "command_side.hpp"
#include "namespaces.hpp"
#include "network.hpp"
#include "privileges.hpp"

namespace qk::sandbox_exec {

namespace {

UniqueFd pidfd_open(pid_t pid)
{
    return UniqueFd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
}

using Network = enforce::SandboxPlan::Network;

// In the child, already in its network namespace: loopback up, and the proxy's socket handed over; `port`
// set to the one the proxy serves.
Step network_step(const enforce::SandboxPlan& plan, int proxy, std::uint16_t& port)
{
    if (plan.network == Network::open)
        return std::nullopt;
    return set_up_network(proxy, plan.proxy_token, port);
}

// After the command ended under Landlock alone (no pid namespace): what it left running, orphaned to
// this subreaper, is killed, children before their own children are handed over.
void kill_descendants()
{
    // Each round kills the children there are and waits for exactly those: one that dies hands its own
    // children to this subreaper before it can be reaped, so the next round sees them. (Waiting for any
    // child instead would block on such an orphan, alive and never killed: a daemon blocked on a FIFO
    // held the run.)
    for (int round = 0; round < 1000; ++round) {
        auto text = read_file(fmt::format("/proc/self/task/{}/children", ::getpid()));
        if (!text || text->empty())
            break;
        std::vector<pid_t> killed;
        for (std::size_t pos = 0; pos < text->size();) {
            std::size_t end = text->find(' ', pos);
            pid_t pid = 0;  // stays 0, and is skipped, where the field is not a number
            (void)std::from_chars(text->data() + pos, text->data() + std::min(end, text->size()), pid);
            if (pid > 0 && ::kill(pid, SIGKILL) == 0)
                killed.push_back(pid);
            pos = end == std::string::npos ? text->size() : end + 1;
        }
        for (pid_t pid : killed)
            while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
            }
        if (killed.empty())
            break;
    }
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
}

// A field of the sandboxed side's report as a whole number: one that is not is nothing, not 0 (which would
// be a success).
std::optional<int> whole_number(const std::string& s)
{
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size())
        return std::nullopt;
    return v;
}

// What the sandboxed side said (see tell): its rules and a setup failure into `result`, and (from pid 1) how
// the command ended.
std::optional<int> read_report(const std::string& said, enforce::SandboxResult& result)
{
    std::optional<int> command_status;
    for (std::size_t pos = 0; pos < said.size();) {
        std::size_t nl = said.find('\n', pos);
        std::string line = said.substr(pos, nl - pos);
        pos = nl == std::string::npos ? said.size() : nl + 1;
        std::vector<std::string> f;
        for (std::size_t s = 0;;) {
            std::size_t tab = line.find('\t', s);
            f.push_back(line.substr(s, tab - s));
            if (tab == std::string::npos)
                break;
            s = tab + 1;
        }
        if (f[0] == "rules" && f.size() == 4) {
            result.landlock_abi = whole_number(f[1]).value_or(0);
            result.rules_added = std::strtoul(f[2].c_str(), nullptr, 10);
            result.grants_missing = std::strtoul(f[3].c_str(), nullptr, 10);
        } else if (f[0] == "setup" && f.size() == 4) {
            result.setup = enforce::SandboxResult::SetupFailure{f[1], whole_number(f[2]).value_or(0), f[3]};
        } else if (f[0] == "status" && f.size() == 2) {
            command_status = whole_number(f[1]);
        }
    }
    return command_status;
}

// One command's supervisor, from its first step to the result it writes: each step of the README's table
// that is the supervisor's is one function here, in the table's order.
class Supervisor {
public:
    Supervisor(const enforce::SandboxPlan& plan, const std::vector<std::string>& argv) : plan_(plan), argv_(argv) {}

    int run();

private:
    Step open_channels();
    Step connect_network();
    Step build_view();
    Step mount_as_host_root(OverlaySpec& spec);
    Step mount_in_user_namespace(const OverlaySpec& spec);
    Step hold_by_landlock_alone();
    Step start_child();
    [[noreturn]] void child_side();
    void wait_for_child();
    int finish(int status);
    int fail(const SetupError& e);
    int end();

    const enforce::SandboxPlan& plan_;
    const std::vector<std::string>& argv_;
    const bool own_network_ = plan_.network != Network::open;
    enforce::SandboxResult result_;
    UniqueFd result_fd_;
    UniqueFd signals_;
    UniqueFd watch_;
    std::string cwd_;
    // Root: the namespaces the child below is forked into (CLONE_NEW*, besides the user namespace), when
    // it is forked into a user namespace mapped from here (fork_mapped_as_root).
    std::optional<int> mapped_child_;
    // Set where the read mask was built inside the command's user namespace as root (CommandSide).
    bool stand_ins_mapped_ = false;
    // With a network list: the connection to the run's proxy, made before the namespaces.
    UniqueFd proxy_;
    UniqueFd from_child_, to_supervisor_;
    pid_t child_ = -1;
    int wait_status_ = 0;
    bool qk_gone_ = false;
};

int Supervisor::run()
{
    if (auto e = open_channels())
        return fail(*e);
    if (auto e = connect_network())
        return fail(*e);
    if (auto e = build_view())
        return fail(*e);
    if (auto e = start_child())
        return fail(*e);
    wait_for_child();
    if (!plan_.overlay)
        kill_descendants();
    return end();
}

int Supervisor::finish(int status)
{
    if (result_fd_.valid())
        (void)write_all(result_fd_.get(), enforce::encode(result_));
    if (result_.setup)
        std::fprintf(stderr, "qk-sandbox-exec: %s\n", printable_message(result_.setup->message).c_str());
    return status;
}

int Supervisor::fail(const SetupError& e)
{
    result_.setup = enforce::SandboxResult::SetupFailure{e.stage, e.error, e.message};
    return finish(enforce::kSetupFailedStatus);
}

// The result file, then signals and qk: every later failure must reach qk, and qk's death must be seen.
Step Supervisor::open_channels()
{
    result_fd_.reset(::open(plan_.result.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!result_fd_.valid() && !plan_.result.empty())
        return setup_error("result", "cannot write the result file " + plan_.result);

    // Signals for the command are taken by a signalfd and forwarded; qk is watched through a pidfd.
    sigset_t forwarded;
    sigemptyset(&forwarded);
    for (int sig : kForwarded)
        sigaddset(&forwarded, sig);
    sigaddset(&forwarded, SIGCHLD);
    ::sigprocmask(SIG_BLOCK, &forwarded, nullptr);
    signals_.reset(::signalfd(-1, &forwarded, SFD_CLOEXEC));
    if (!signals_.valid())
        return setup_error("signals", "cannot take signals for the command (signalfd)");
    watch_ = plan_.watch_pid > 0 ? pidfd_open(plan_.watch_pid) : UniqueFd();
    if (plan_.watch_pid > 0 && !watch_.valid())
        return setup_error("watch", fmt::format("cannot watch qk (pid {})", plan_.watch_pid));
    return std::nullopt;
}

// Before any namespace: the proxy's socket lies in the run's directory, which the covers hide.
Step Supervisor::connect_network()
{
    if (plan_.network == Network::proxy)
        return connect_proxy(plan_.proxy, proxy_);
    return std::nullopt;
}

// The command's view: with an overlay, its namespaces and mounts, then the working directory again on the
// merged tree; under Landlock alone, what holds it instead.
Step Supervisor::build_view()
{
    cwd_.assign(4096, '\0');
    if (!::getcwd(cwd_.data(), cwd_.size()))
        return setup_error("cwd", "cannot tell the working directory");
    cwd_.resize(std::char_traits<char>::length(cwd_.c_str()));
    if (!plan_.overlay)
        return hold_by_landlock_alone();
    OverlaySpec spec{plan_.root, plan_.upper, plan_.work, {}, false, false, {}, {}, plan_.hidden,
                     plan_.binds, plan_.make_dirs, plan_.read_only, plan_.cover, plan_.tmpdir};
    if (plan_.read_mask) {
        spec.mask = plan_.mask;
        for (const auto& g : plan_.grants)
            spec.visible.push_back(g.path);
    }
    // Root that may mount on the host (CAP_SYS_ADMIN; not root in a container that withholds it).
    Step mounted = ::geteuid() == 0 && has_capability(CAP_SYS_ADMIN) ? mount_as_host_root(spec)
                                                                     : mount_in_user_namespace(spec);
    if (mounted)
        return mounted;
    // The old directory is the real workspace's; the same path now leads to the merged tree.
    if (::chdir(cwd_.c_str()) != 0)
        return setup_error("cwd", "cannot enter " + cwd_ + " on the merged tree");
    return std::nullopt;
}

// Root mounts everything as the host's root, in a mount namespace of its own, before its user namespace:
// the stand-ins' owner is then the id that namespace does not map (out of reach of every capability the
// command keeps), the overlay can follow the mask's redirects into the run's mirror, and every mount is
// locked under the command.
Step Supervisor::mount_as_host_root(OverlaySpec& spec)
{
    spec.host_root = true;
    spec.mirror = plan_.read_mask ? plan_.mirror : std::string();
    if (auto e = enter_mount_namespace())
        return e;
    if (plan_.read_mask) {
        if (auto e = build_mask_on_tmpfs(spec.mask, spec.root, spec.mask_visible(), spec.hidden,
                                         enforce::StandInOwner{enforce::kStandInOwner, enforce::kStandInOwner},
                                         spec.mirror))
            return e;
        spec.mask_built = true;
    }
    if (auto e = mount_overlay(spec))
        return e;
    // pid 1 is forked into its user, mount and pid namespaces below, mapped from here.
    mapped_child_ = CLONE_NEWNS | CLONE_NEWPID | (own_network_ ? CLONE_NEWNET : 0);
    return std::nullopt;
}

// Without root (or without CAP_SYS_ADMIN over the host): the user namespace first, the mounts inside it.
Step Supervisor::mount_in_user_namespace(const OverlaySpec& spec)
{
    stand_ins_mapped_ = plan_.read_mask && ::geteuid() == 0;
    if (auto e = enter_namespaces(true, own_network_))
        return e;
    return mount_overlay(spec);
}

// No overlay: the supervisor is the subreaper of what the command starts.
Step Supervisor::hold_by_landlock_alone()
{
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)  // else what it leaves running escapes
        return setup_error("subreaper", "cannot become the subreaper of the command's processes");
    // qk asks for it where its probe made one; where root may not (a container's seccomp profile), the
    // run says what the command may then reach. The command is forked into it below.
    if (plan_.user_namespace)
        mapped_child_ = own_network_ ? CLONE_NEWNET : 0;
    else if (own_network_)  // qk refuses such a task before it starts; a plan written by hand is refused here
        return SetupError{"network", EINVAL, "a network namespace needs the command's own user namespace, "
                                             "which this sandbox does not make (Landlock alone, not root)"};
    return std::nullopt;
}

// Forks pid 1 (over an overlay) or the command itself, with a pipe back for what the sandboxed side says.
Step Supervisor::start_child()
{
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        return setup_error("pipe", "cannot make a pipe");
    from_child_.reset(pipe_fds[0]);
    to_supervisor_.reset(pipe_fds[1]);
    if (mapped_child_) {
        if (auto e = fork_mapped_as_root(*mapped_child_, child_))
            return e;
    } else {
        child_ = ::fork();
        if (child_ < 0)
            return setup_error("fork", "cannot start the command");
    }
    if (child_ == 0)
        child_side();
    to_supervisor_.reset();
    return std::nullopt;
}

// In the child: its mount tree private, its network, then pid 1 (over an overlay) or the command.
void Supervisor::child_side()
{
    from_child_.reset();
    // The mount namespace the child was forked into is its own copy: private, so that nothing it
    // mounts reaches the supervisor's (which is private already; this keeps the copy so too).
    if (mapped_child_ && (*mapped_child_ & CLONE_NEWNS) &&
        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        tell_setup(to_supervisor_.get(), setup_error("mount-private", "cannot make the mount tree private"));
        ::_exit(enforce::kSetupFailedStatus);
    }
    CommandSide side{to_supervisor_.get(), stand_ins_mapped_, 0};
    if (auto e = network_step(plan_, proxy_.get(), side.proxy_port)) {
        tell_setup(to_supervisor_.get(), *e);
        ::_exit(enforce::kSetupFailedStatus);
    }
    if (plan_.overlay)
        reaper(plan_, argv_, side);
    exec_command(plan_, argv_, side);
}

// Waits for the child (pid 1, or the command itself) while forwarding signals and watching qk.
void Supervisor::wait_for_child()
{
    // Without a pidfd for the child (the descriptor limit reached), poll would skip its slot and wait for
    // ever: its end is then found by waitpid each time poll wakes, which SIGCHLD on the signalfd makes it
    // do (SIGCHLD is blocked since before the fork, so one sent early waits there). The command is running
    // already: failing now would leave it behind.
    UniqueFd child_fd = pidfd_open(child_);
    for (bool done = false; !done;) {
        struct pollfd fds[3] = {{child_fd.get(), POLLIN, 0}, {signals_.get(), POLLIN, 0}, {watch_.get(), POLLIN, 0}};
        int n = ::poll(fds, watch_.valid() ? 3 : 2, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (fds[1].revents & POLLIN) {
            signalfd_siginfo info {};
            if (::read(signals_.get(), &info, sizeof info) == sizeof info && info.ssi_signo != SIGCHLD)
                ::kill(child_, static_cast<int>(info.ssi_signo));
        }
        if (watch_.valid() && (fds[2].revents & POLLIN)) {
            qk_gone_ = true;  // qk died: nothing it started may outlive it
            ::kill(child_, SIGKILL);
            watch_.reset();
        }
        const bool ended = fds[0].revents & POLLIN;
        if (ended || !child_fd.valid()) {
            pid_t got = ::waitpid(child_, &wait_status_, ended ? 0 : WNOHANG);
            if (got < 0 && errno != EINTR) {
                wait_status_ = 1 << 8;  // never expected (only this process reaps it): as the reaper says then
                got = child_;
            }
            done = got == child_;
        }
    }
}

// The result for qk, from what the sandboxed side said and how the child ended.
int Supervisor::end()
{
    std::string said;
    (void)read_all(from_child_.get(), said);
    std::optional<int> command_status = read_report(said, result_);
    if (result_.setup && !qk_gone_)
        return finish(result_.setup->stage == "exec" ? 127 : enforce::kSetupFailedStatus);
    int status = command_status && !qk_gone_ ? *command_status : wait_status_;
    if (WIFSIGNALED(status)) {
        result_.signal = WTERMSIG(status);
        return finish(128 + WTERMSIG(status));
    }
    result_.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    return finish(*result_.exit_code);
}

}  // namespace

int run_sandboxed(const enforce::SandboxPlan& plan, const std::vector<std::string>& argv)
{
    return Supervisor(plan, argv).run();
}

}  // namespace qk::sandbox_exec
