#include "interrupt.hpp"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "qk/record/launcher.hpp"

namespace qk::cli {
namespace {

std::atomic<int> g_signal{0};
std::thread g_watcher;
std::mutex g_callback_mutex;
std::function<void()> g_callback;

sigset_t watched()
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGHUP);
    sigaddset(&set, SIGUSR1);  // our own wake-up, to stop the watcher
    return set;
}

void watch()
{
    sigset_t set = watched();
    for (;;) {
        int sig = 0;
        if (sigwait(&set, &sig) != 0 || sig == SIGUSR1)
            return;
        int expected = 0;
        if (!g_signal.compare_exchange_strong(expected, sig)) {
            // Asked twice: stop waiting for the recorders.
            ::signal(sig, SIG_DFL);
            sigset_t one;
            sigemptyset(&one);
            sigaddset(&one, sig);
            pthread_sigmask(SIG_UNBLOCK, &one, nullptr);
            ::raise(sig);
            return;
        }
        record::stop_all_commands();
        std::lock_guard lock(g_callback_mutex);
        if (g_callback)
            g_callback();
    }
}

}  // namespace

InterruptWatch::InterruptWatch()
{
    sigset_t set = watched();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    g_watcher = std::thread(watch);
}

InterruptWatch::~InterruptWatch()
{
    if (g_watcher.joinable()) {
        pthread_kill(g_watcher.native_handle(), SIGUSR1);
        g_watcher.join();
    }
}

int InterruptWatch::signal() { return g_signal.load(); }

const std::atomic<int>& InterruptWatch::signal_flag() { return g_signal; }

void InterruptWatch::on_interrupt(std::function<void()> callback)
{
    std::lock_guard lock(g_callback_mutex);
    g_callback = std::move(callback);
}

}  // namespace qk::cli
