// HelperServer: qk's end of the run's one sandbox helper, `qk-sandbox-exec --serve`, which forks each
// enforced command's helper into the task's cgroup instead of qk forking and exec'ing a new one for every
// command (src/sandbox_exec/server.hpp; the protocol is qk/enforce/served_command.hpp). Started with the
// run's first command that asks for it; ended with the run, when its channel closes.
#pragma once

#include <sys/types.h>

#include <mutex>
#include <optional>
#include <string>

#include "qk/record/process.hpp"
#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::sandbox {

class HelperServer {
public:
    explicit HelperServer(std::string helper) : helper_(std::move(helper)) {}
    // Closes the channel, which ends the server, and reaps it.
    ~HelperServer();
    HelperServer(const HelperServer&) = delete;
    HelperServer& operator=(const HelperServer&) = delete;

    // Whether it serves: started and answering (the first call starts it). False when the helper does not
    // serve (another build's), could not be started, or died; commands then exec a helper each.
    bool available();

    // Starts `request` (qk-sandbox-exec's own command line, with its cgroup and output fd) as the server's
    // child, as record::spawn would have as ours. A record::Starter. Safe from several threads at once.
    Result<record::ForeignProcess> start(const record::SpawnRequest& request);

private:
    // The server's channel, started the first time; an Error for every later call once it failed or died.
    Result<int> channel();
    Error gone(const std::string& why);

    const std::string helper_;
    std::mutex mutex_;
    UniqueFd channel_;
    pid_t pid_ = -1;
    std::optional<Error> broken_;
};

}  // namespace qk::sandbox
