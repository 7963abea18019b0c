#include "trace_command.hpp"

#include <signal.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/core.h>

#include "interrupt.hpp"
#include "qk/record/recorder.hpp"
#include "qk/report/trace_json.hpp"
#include "qk/report/trace_summary.hpp"
#include "qk/record/process.hpp"
#include "qk/util/atomic_file.hpp"
#include "qk/util/printable.hpp"
#include "qk/util/settings.hpp"

namespace qk::cli {
namespace fs = std::filesystem;

namespace {

// Writes next to the target and renames, so a reader never sees half a report.
void write_atomically(const std::string& path, const std::string& text)
{
    if (path == "-") {
        if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
            throw FatalError(sys_error("cannot write the trace to standard output"));
        return;
    }
    if (Status s = write_file_atomically(path, text); !s)
        throw FatalError(error(fmt::format("cannot write the trace: {}", s.error().message)));
}

// Where qk-trace's own time goes, for QK_TRACE_TIMINGS (docs/benchmarks.md reads these).
class PhaseTimes {
    using Clock = std::chrono::steady_clock;

public:
    explicit PhaseTimes(bool on) : on_(on), last_(Clock::now()) {}
    // Ends the phase `name` now.
    void lap(const char* name)
    {
        auto now = Clock::now();
        if (on_)
            text_ += fmt::format(" {} {:.2f}", name, ms(now - last_));
        last_ = now;
    }
    void note(const char* name, Clock::duration d)
    {
        if (on_)
            text_ += fmt::format(" {} {:.2f}", name, ms(d));
    }
    void print() const
    {
        if (on_)
            std::fprintf(stderr, "qk-trace timings (ms):%s\n", text_.c_str());
    }

private:
    static double ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
    bool on_;
    Clock::time_point last_;
    std::string text_;
};

}  // namespace

int run_trace(const TraceOptions& options)
{
    if (options.command.empty())
        throw FatalError("qk-trace: no command given. Usage: qk-trace [--recorder R] [--json FILE] [-C DIR] -- "
                         "COMMAND ARGS...");
    const Settings settings = or_fatal(Settings::read());
    std::string choice_text = options.recorder;
    if (choice_text.empty())
        choice_text = settings.recorder_choice.empty() ? "auto" : settings.recorder_choice;
    auto choice = or_fatal(record::parse_recorder_choice(choice_text));

    std::error_code ec;
    fs::path cwd = options.directory.empty() ? fs::current_path() : fs::absolute(options.directory, ec);
    if (ec || !fs::is_directory(cwd, ec))
        throw FatalError(fmt::format("qk-trace: -C {}: not a directory", options.directory));
    cwd = fs::canonical(cwd, ec);

    PhaseTimes times(settings.trace_timings);
    std::string why_none;
    auto recorder = or_fatal(record::make_recorder(choice, settings.recorder, &why_none));
    times.lap("load");
    report::TraceRequest request{options.command, cwd.string()};
    record::Command cmd{options.command, cwd.string()};
    cmd.record_denials = true;  // input analysis: everything it sees, refusals included

    if (!recorder) {
        // auto with no working recorder: run the command anyway, unrecorded, and say why.
        std::fprintf(stderr, "qk-trace: running unrecorded: %s\n", printable_message(why_none).c_str());
        auto program = record::find_program(cmd.argv.at(0), cmd.cwd);
        if (!program) {
            std::fprintf(stderr, "qk-trace: %s\n", printable_message(program.error().message).c_str());
            return 127;
        }
        auto pid = record::spawn(record::SpawnRequest{*program, cmd.argv, cmd.cwd, -1});
        if (!pid) {
            std::fprintf(stderr, "qk-trace: %s\n", printable_message(pid.error().message).c_str());
            return 127;
        }
        return record::shell_status(record::wait_exit(*pid));
    }

    auto trace = recorder->record(cmd);
    times.lap("record");
    if (!trace) {
        std::fprintf(stderr, "qk-trace: %s\n", printable_message(trace.error().message).c_str());
        return 127;
    }
    if (int sig = InterruptWatch::signal()) {
        trace->recording.mark_incomplete(fmt::format(
            "qk-trace was interrupted by {}: the command was killed before it finished", report::signal_name(sig)));
        trace->status = record::ExitStatus{0, sig};
    }
    times.note("of-which-command", trace->ran);
    std::fputs(report::trace_summary(request, *trace).c_str(), stderr);
    times.lap("summary");
    if (!options.json_path.empty())
        write_atomically(options.json_path, report::trace_json(request, *trace));
    times.lap("json");
    recorder.reset();  // detaches the programs, frees the ring: part of what the caller waits for
    times.lap("teardown");
    times.print();
    return record::shell_status(trace->status);
}

}  // namespace qk::cli
