// qk-sandbox-exec: runs one command of a task under --sandbox=enforce, as the plan qk wrote says
// (src/sandbox_exec/README.md), or probes what enforce can use here.
//   qk-sandbox-exec PLAN -- PROGRAM ARGS...
//   qk-sandbox-exec --probe WORKSPACE_ROOT SCRATCH_DIR   (what it makes in SCRATCH_DIR is left there)
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "probe_steps.hpp"
#include "qk/enforce/sandbox_plan.hpp"
#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "supervisor.hpp"

int main(int argc, char** argv)
{
    using namespace qk;
    if (argc == 4 && std::string_view(argv[1]) == "--probe") {
        std::string text = enforce::encode(sandbox_exec::probe(argv[2], argv[3]));
        // qk reads it through a pipe: one cut short must not pass for a whole report.
        return std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0 ? 0 : 1;
    }
    if (argc < 4 || std::string_view(argv[2]) != "--") {
        std::fprintf(stderr, "usage: qk-sandbox-exec PLAN -- PROGRAM ARGS...\n"
                             "       qk-sandbox-exec --probe WORKSPACE_ROOT SCRATCH_DIR\n");
        return 2;
    }
    auto text = read_file(argv[1]);
    if (!text) {
        std::fprintf(stderr, "qk-sandbox-exec: %s\n", printable_message(text.error().message).c_str());
        return enforce::kSetupFailedStatus;
    }
    auto plan = enforce::decode_plan(*text);
    if (!plan) {
        std::fprintf(stderr, "qk-sandbox-exec: %s: %s\n", printable(argv[1]).c_str(),
                     printable_message(plan.error().message).c_str());
        return enforce::kSetupFailedStatus;
    }
    return sandbox_exec::run_sandboxed(*plan, std::vector<std::string>(argv + 3, argv + argc));
}
