// qk-trace: runs a command and records every file it touches (see docs/qk-trace.md).
#include <cstdio>

#include <CLI/CLI.hpp>

#include "interrupt.hpp"
#include "trace_command.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/result.hpp"
#include "qk/util/version.hpp"

int main(int argc, char** argv)
{
    qk::cli::InterruptWatch interrupts;
    qk::cli::TraceOptions options;
    CLI::App app{"qk-trace: run a command and record every file it and its children touch", "qk-trace"};
    app.set_version_flag("--version", std::string("qk-trace ") + qk::version());
    app.add_option("--recorder", options.recorder, "auto, ebpf or strace (default: $QK_RECORDER, else auto)")
        ->default_val("");
    app.add_option("--json", options.json_path, "write the trace as JSON to FILE ('-' for stdout)");
    app.add_option("-C", options.directory, "run the command in DIR");
    app.add_option("command", options.command, "the command and its arguments, after --");
    app.positionals_at_end();
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (options.command.empty()) {
        // Nothing to run: the usage says what to give, which "command is required" alone does not.
        std::fprintf(stderr, "%s\nqk-trace: no command given; write it after --, as in: qk-trace -- make\n",
                     app.help().c_str());
        return 2;
    }
    try {
        return qk::cli::run_trace(options);
    } catch (const qk::FatalError& e) {
        std::fprintf(stderr, "%s\n", qk::printable_message(e.what()).c_str());  // it may quote a path
        return e.exit_code();
    }
}
