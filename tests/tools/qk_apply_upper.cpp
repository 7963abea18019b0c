// qk-apply-upper: the enforce apply step on its own, for tests and benchmarks.
//
//   qk-apply-upper changes <upper> <root>             print what the upper layer changed
//   qk-apply-upper apply [--trash D] <upper> <root> <output>...
//                                                     apply it, keeping what the outputs cover
//   qk-apply-upper sandbox <root> -- <command>...     make a SandboxDir and a command's upper and work
//                                                     directories, print them, run <command> with
//                                                     QK_UPPER, QK_WORK, QK_TRASH and QK_RUN_DIR set,
//                                                     then clean up
//
// Output is one JSON object on stdout. Outputs are Nx output patterns ("dist", "target/release",
// "dist/**/*.js"), compiled by key::OutputSet; a directory may be made or removed when an output may lie
// under it, as qk's rules allow.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "qk/enforce/apply.hpp"
#include "qk/enforce/sandbox_dir.hpp"
#include "qk/enforce/upper_layer.hpp"
#include "qk/key/output_files.hpp"
#include "qk/util/json_writer.hpp"

namespace {

using namespace qk;
using Clock = std::chrono::steady_clock;

int fail(const std::string& message)
{
    std::fprintf(stderr, "qk-apply-upper: %s\n", message.c_str());
    return 2;
}

void write_changes(JsonWriter& w, const std::vector<enforce::Change>& changes)
{
    w.key("changes").begin_array();
    for (const auto& c : changes)
        w.begin_object().key("path").value(c.path).key("kind").value(enforce::to_string(c.kind)).end_object();
    w.end_array();
}

double ms_since(Clock::time_point start)
{
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

int changes_command(const char* upper, const char* root)
{
    auto changes = enforce::read_upper_layer(upper, root);
    if (!changes)
        return fail(changes.error().message);
    JsonWriter w(0);
    w.begin_object();
    write_changes(w, *changes);
    w.end_object();
    std::fputs(std::move(w).take_line().c_str(), stdout);
    return 0;
}

int apply_command(const char* trash, const char* upper, const char* root, std::vector<std::string> patterns)
{
    auto outputs = key::OutputSet::compile(patterns);
    if (!outputs)
        return fail(outputs.error().message);
    auto keep = [&](std::string_view rel, bool directory) {
        return outputs->matches(rel) || (directory && outputs->may_match_under(rel));
    };
    const auto read_start = Clock::now();
    auto changes = enforce::read_upper_layer(upper, root);
    if (!changes)
        return fail(changes.error().message);
    const double read_ms = ms_since(read_start);
    const auto apply_start = Clock::now();
    auto applied = enforce::apply(upper, root, *changes, keep, trash != nullptr ? trash : "");
    if (!applied)
        return fail(applied.error().message);
    const double apply_ms = ms_since(apply_start);
    JsonWriter w(0);
    w.begin_object();
    write_changes(w, *changes);
    w.key("applied").value(static_cast<std::int64_t>(applied->applied));
    w.key("discarded").begin_array();
    for (const auto& d : applied->discarded)
        w.begin_object().key("path").value(d.path).key("kind").value(enforce::to_string(d.kind)).end_object();
    w.end_array();
    // Microseconds as integers: the writer has no floating point.
    w.key("read_us").value(static_cast<std::int64_t>(read_ms * 1000));
    w.key("apply_us").value(static_cast<std::int64_t>(apply_ms * 1000));
    w.end_object();
    std::fputs(std::move(w).take_line().c_str(), stdout);
    return 0;
}

int sandbox_command(const char* root, char** command)
{
    auto settings = Settings::read();
    if (!settings)
        return fail(settings.error().message);
    auto dir = enforce::SandboxDir::create(root, enforce::SandboxDir::bases(settings->sandbox, root));
    if (!dir)
        return fail(dir.error().message);
    auto dirs = dir->command_dirs();
    if (!dirs)
        return fail(dirs.error().message);
    JsonWriter w(0);
    w.begin_object();
    w.key("base").value(dir->base().string());
    w.key("run_dir").value(dir->run_dir().string());
    w.key("same_filesystem").value(dir->same_filesystem());
    std::vector<std::string> removed;
    for (const auto& p : dir->removed())
        removed.push_back(p.string());
    w.key("removed").strings(removed);
    w.key("upper").value(dirs->upper.string());
    w.key("work").value(dirs->work.string());
    w.end_object();
    if (std::fputs(std::move(w).take_line().c_str(), stdout) == EOF || std::fflush(stdout) != 0)
        return fail("cannot write the sandbox's directories to stdout");
    pid_t pid = ::fork();
    if (pid < 0)
        return fail("cannot fork");
    if (pid == 0) {
        ::setenv("QK_UPPER", dirs->upper.c_str(), 1);
        ::setenv("QK_WORK", dirs->work.c_str(), 1);
        ::setenv("QK_TRASH", dirs->trash.c_str(), 1);
        ::setenv("QK_RUN_DIR", dir->run_dir().c_str(), 1);
        ::execvp(command[0], command);
        std::perror(command[0]);
        ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

int main(int argc, char** argv)
{
    const std::string usage =
        "usage: qk-apply-upper changes <upper> <root> | apply [--trash <dir>] <upper> <root> <output>... | "
        "sandbox <root> -- <command>...";
    if (argc < 2)
        return fail(usage);
    const std::string cmd = argv[1];
    if (cmd == "changes" && argc == 4)
        return changes_command(argv[2], argv[3]);
    if (cmd == "apply" && argc >= 6 && std::string(argv[2]) == "--trash")
        return apply_command(argv[3], argv[4], argv[5], std::vector<std::string>(argv + 6, argv + argc));
    if (cmd == "apply" && argc >= 4)
        return apply_command(nullptr, argv[2], argv[3], std::vector<std::string>(argv + 4, argv + argc));
    if (cmd == "sandbox" && argc >= 5 && std::string(argv[3]) == "--")
        return sandbox_command(argv[2], argv + 4);
    return fail(usage);
}
