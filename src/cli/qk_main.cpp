// qk: the task runner (run-many, run, affected, show, doctor, report). See docs/qk.md.
#include <algorithm>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string_view>
#include <thread>

#include <CLI/CLI.hpp>

#include "qk/util/version.hpp"

#include "interrupt.hpp"
#include "qk_commands.hpp"
#include "report_command.hpp"  // reexec_with_huge_pages
#include "qk/util/printable.hpp"
#include "qk/util/result.hpp"

namespace {

// "--sandbox=MODE" as "--sandbox-mode MODE".
std::vector<std::string> split_sandbox_mode(int argc, char** argv)
{
    std::vector<std::string> args;
    bool options = true;
    for (int i = 1; i < argc; ++i) {
        std::string_view a = argv[i];
        options = options && a != "--";
        if (options && a.starts_with("--sandbox=")) {
            args.emplace_back("--sandbox-mode");
            args.emplace_back(a.substr(10));
        } else {
            args.emplace_back(a);
        }
    }
    return args;
}

// The arguments parsed into `app`'s options; an exit code when there is nothing to run (help, version,
// an error), nullopt to go on.
std::optional<int> parse(CLI::App& app, int argc, char** argv)
{
    if (argc == 1) {
        // No command: what there is to do, rather than "A subcommand is required".
        std::fprintf(stderr, "%s", app.help().c_str());
        return 2;
    }
    try {
        std::vector<std::string> args = split_sandbox_mode(argc, argv);
        std::reverse(args.begin(), args.end());  // CLI11 takes them last first
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    return std::nullopt;
}

}  // namespace

int main(int argc, char** argv)
{
    // A closed stdout (qk ... | head) must end the output, not the run: writes fail with EPIPE instead.
    // Commands get the default disposition back (the launcher resets every signal).
    std::signal(SIGPIPE, SIG_IGN);
    if (argc > 1 && std::string_view(argv[1]) == "report")
        qk::cli::reexec_with_huge_pages(argv);
    qk::cli::InterruptWatch interrupts;
    CLI::App app{"qk: run the tasks of an Nx-compatible monorepo, cached and checked", "qk"};
    app.set_version_flag("--version", std::string("qk ") + qk::version());
    app.require_subcommand(1);
    qk::cli::Commands commands(app);
    if (auto exit = parse(app, argc, argv))
        return *exit;
    try {
        return commands.run();
    } catch (const qk::FatalError& e) {
        std::fprintf(stderr, "qk: %s\n", qk::printable_message(e.what()).c_str());  // it may quote a path
        return e.exit_code();
    }
}
