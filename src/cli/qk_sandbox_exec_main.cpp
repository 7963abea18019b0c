// qk-sandbox-exec: runs one command of a task under --sandbox=enforce, as the plan qk wrote says
// (src/sandbox_exec/README.md), serves a run's commands, or probes what enforce can use here.
//   qk-sandbox-exec PLAN -- PROGRAM ARGS...
//   qk-sandbox-exec --serve          (its standard input qk's channel: src/sandbox_exec/server.hpp)
//   qk-sandbox-exec --probe WORKSPACE_ROOT SCRATCH_DIR   (what it makes in SCRATCH_DIR is left there)
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "probe_steps.hpp"
#include "qk/enforce/sandbox_plan.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "server.hpp"
#include "supervisor.hpp"

namespace {

constexpr const char* kUsage = "usage: qk-sandbox-exec PLAN -- PROGRAM ARGS...\n"
                               "       qk-sandbox-exec --serve\n"
                               "       qk-sandbox-exec --probe WORKSPACE_ROOT SCRATCH_DIR\n";

// PLAN -- PROGRAM ARGS...: one command, from its plan file.
int run_plan(const std::vector<std::string>& args)
{
    using namespace qk;
    if (args.size() < 3 || args[1] != "--") {
        std::fputs(kUsage, stderr);
        return 2;
    }
    auto text = read_file(args[0]);
    if (!text) {
        std::fprintf(stderr, "qk-sandbox-exec: %s\n", printable_message(text.error().message).c_str());
        return enforce::kSetupFailedStatus;
    }
    auto plan = enforce::decode_plan(*text);
    if (!plan) {
        std::fprintf(stderr, "qk-sandbox-exec: %s: %s\n", printable(args[0]).c_str(),
                     printable_message(plan.error().message).c_str());
        return enforce::kSetupFailedStatus;
    }
    return sandbox_exec::run_sandboxed(*plan, std::vector<std::string>(args.begin() + 2, args.end()));
}

// The channel comes as standard input: moved above 2 (each child closes it with the rest) and /dev/null
// put in its place.
int serve()
{
    int channel = ::fcntl(0, F_DUPFD_CLOEXEC, 3);
    int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (channel < 0 || null_fd < 0 || ::dup2(null_fd, 0) < 0) {
        std::perror("qk-sandbox-exec --serve");
        return qk::enforce::kSetupFailedStatus;
    }
    ::close(null_fd);
    return qk::sandbox_exec::serve(channel, run_plan);
}

}  // namespace

int main(int argc, char** argv)
{
    using namespace qk;
    if (argc == 4 && std::string_view(argv[1]) == "--probe") {
        std::string text = enforce::encode(sandbox_exec::probe(argv[2], argv[3]));
        // qk reads it through a pipe: one cut short must not pass for a whole report.
        return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc == 2 && std::string_view(argv[1]) == "--serve")
        return serve();
    return run_plan(std::vector<std::string>(argv + 1, argv + argc));
}
