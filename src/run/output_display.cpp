#include "output_display.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "line_splitter.hpp"

namespace qk::run {

namespace {

using Clock = std::chrono::steady_clock;

// Most terminals show these well on dark and light backgrounds; red and green are kept for results.
constexpr int kColours[] = {36, 35, 34, 33, 96, 95, 94, 93};
constexpr std::size_t kMaxRunningRows = 8;
constexpr auto kRefresh = std::chrono::milliseconds(100);

// Columns a UTF-8 string takes, near enough for task ids: one per code point.
std::size_t columns_of(std::string_view s)
{
    std::size_t n = 0;
    for (unsigned char c : s)
        n += (c & 0xC0) != 0x80;
    return n;
}

std::string cut_to(std::string_view s, std::size_t columns)
{
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && n++ == columns)
            return std::string(s.substr(0, i));
    }
    return std::string(s);
}

std::string format_duration(std::chrono::milliseconds wall)
{
    auto ms = wall.count();
    if (ms < 10'000)
        return fmt::format("{:.1f}s", static_cast<double>(ms) / 1000.0);
    if (ms < 60'000)
        return fmt::format("{}s", ms / 1000);
    return fmt::format("{}m {:02}s", ms / 60'000, (ms / 1000) % 60);
}

}  // namespace

Sink fd_sink(int fd)
{
    return [fd](std::string_view text) {
        (void)write_all(fd, text);  // a terminal or pipe that is gone takes no more output
    };
}

int terminal_columns(int fd)
{
    winsize ws{};
    if (::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    return 80;
}

std::string describe_exit(const record::ExitStatus& status)
{
    if (status.signal == 0)
        return fmt::format("exit code {}", status.code);
    const char* name = ::sigabbrev_np(status.signal);
    return name ? fmt::format("killed by signal {} (SIG{})", status.signal, name)
                : fmt::format("killed by signal {}", status.signal);
}

std::optional<OutputStyle> parse_output_style(std::string_view name)
{
    if (name == "stream")
        return OutputStyle::stream;
    if (name == "static")
        return OutputStyle::grouped;
    if (name == "dynamic")
        return OutputStyle::dynamic;
    return std::nullopt;
}

OutputDisplay::OutputDisplay(const std::vector<std::string>& task_ids, Sink sink, DisplayOptions options)
    : sink_(std::move(sink)), options_(options)
{
    for (auto& id : task_ids)
        task_locked(id);
    if (status_area())
        timer_ = std::thread([this] { timer_loop(); });
}

OutputDisplay::~OutputDisplay()
{
    stop_timer();
    std::lock_guard lock(mutex_);
    if (std::string erase = erase_status_locked(); !erase.empty())
        sink_(erase);
}

OutputDisplay::Task& OutputDisplay::task_locked(std::string_view id)
{
    auto it = index_.find(std::string(id));
    if (it != index_.end())
        return tasks_[it->second];
    index_.emplace(std::string(id), tasks_.size());
    std::string shown = printable(id);
    width_ = std::max(width_, columns_of(shown));
    return tasks_.emplace_back(Task{std::string(id), std::move(shown)});
}

std::string OutputDisplay::prefix_locked(const Task& task) const
{
    std::string pad(width_ - std::min(width_, columns_of(task.shown)), ' ');
    if (!options_.is_terminal)
        return fmt::format("{}{} | ", task.shown, pad);
    int colour = kColours[index_.at(task.id) % std::size(kColours)];
    return fmt::format("\x1b[{}m{}\x1b[0m{} \x1b[2m|\x1b[0m ", colour, task.shown, pad);
}

std::string OutputDisplay::mark(std::string_view symbol, int colour) const
{
    return options_.is_terminal ? fmt::format("\x1b[{}m{}\x1b[0m", colour, symbol) : std::string(symbol);
}

void OutputDisplay::started(std::string_view id)
{
    std::lock_guard lock(mutex_);
    Task& t = task_locked(id);
    t.state = State::running;
    t.start = Clock::now();
    emit_locked({});
}

std::string OutputDisplay::output_line_locked(const Task& task, std::string_view text) const
{
    // A reset after the line: a colour a command left on must not spill into the next prefix.
    const char* reset = options_.is_terminal ? "\x1b[0m" : "";
    return fmt::format("{}{}{}\n", prefix_locked(task), text, reset);
}

void OutputDisplay::line(std::string_view id, std::string_view text)
{
    std::lock_guard lock(mutex_);
    Task& t = task_locked(id);
    if (options_.style == OutputStyle::stream)
        emit_locked({output_line_locked(t, text)});
    else
        t.held.push_back(output_line_locked(t, text));
}

void OutputDisplay::note(std::string_view id, std::string_view message)
{
    std::lock_guard lock(mutex_);
    emit_locked({output_line_locked(task_locked(id), "qk: " + printable(message))});
}

void OutputDisplay::finished(std::string_view id, bool succeeded, const record::ExitStatus& status,
                             std::chrono::milliseconds wall)
{
    std::lock_guard lock(mutex_);
    Task& t = task_locked(id);
    t.state = succeeded ? State::succeeded : State::failed;
    t.status = status;
    std::string text = succeeded ? fmt::format("{} done in {}", mark("✔", 32), format_duration(wall))
                                 : fmt::format("{} failed: {} after {}", mark("✖", 31), describe_exit(status),
                                               format_duration(wall));
    // Held lines: the task's block (static), or a failure's output (dynamic: minimal, errors always shown).
    std::vector<std::string> lines;
    if (options_.style == OutputStyle::grouped || !succeeded)
        lines = std::move(t.held);
    t.held.clear();
    lines.push_back(prefix_locked(t) + text + "\n");
    emit_locked(lines);
}

void OutputDisplay::restored(std::string_view id, std::string_view terminal_output)
{
    std::lock_guard lock(mutex_);
    Task& t = task_locked(id);
    t.state = State::restored;
    std::vector<std::string> lines;
    if (options_.replay_restored)
        for_each_line(terminal_output, [&](std::string_view text) { lines.push_back(output_line_locked(t, text)); });
    lines.push_back(fmt::format("{}{} restored from the cache\n", prefix_locked(t), mark("✔", 32)));
    emit_locked(lines);
}

void OutputDisplay::skipped(std::string_view id, std::string_view failed_dependency)
{
    std::lock_guard lock(mutex_);
    Task& t = task_locked(id);
    t.state = State::skipped;
    t.because = printable(failed_dependency);
    emit_locked({fmt::format("{}{} skipped: {} failed\n", prefix_locked(t), mark("-", 2), t.because)});
}

void OutputDisplay::stored_with_network(std::string_view id)
{
    std::lock_guard lock(mutex_);
    task_locked(id).network = true;
}

void OutputDisplay::summary(const RunSummary& run)
{
    stop_timer();
    std::lock_guard lock(mutex_);
    std::string text = erase_status_locked();
    closed_ = true;
    text += summary_text_locked(run);
    sink_(text);
}

void OutputDisplay::emit_locked(const std::vector<std::string>& lines)
{
    if (!status_area()) {
        for (const auto& l : lines)
            sink_(l);
        return;
    }
    std::string out = erase_status_locked();
    for (const auto& l : lines)
        out += l;
    out += draw_status_locked();
    if (!out.empty())
        sink_(out);
}

std::string OutputDisplay::erase_status_locked()
{
    if (status_rows_ == 0)
        return {};
    // The cursor sits at the start of the line below the area: go up to its first line, clear to the end.
    std::string out = fmt::format("\r\x1b[{}A\x1b[J", status_rows_);
    status_rows_ = 0;
    drawn_.clear();
    return out;
}

std::string OutputDisplay::draw_status_locked()
{
    if (closed_ || !status_area())
        return {};
    drawn_ = status_lines_locked();
    status_rows_ = drawn_.size();
    std::string out;
    for (const auto& l : drawn_)
        out += fmt::format("\x1b[2m{}\x1b[0m\n", l);
    return out;
}

std::vector<std::string> OutputDisplay::status_lines_locked() const
{
    std::size_t running = 0, done = 0, failed = 0, restored = 0, skipped = 0;
    std::vector<std::string> lines;
    auto now = Clock::now();
    for (const auto& t : tasks_) {
        switch (t.state) {
        case State::pending: break;
        case State::running:
            if (++running <= kMaxRunningRows) {
                auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - t.start).count();
                lines.push_back(fmt::format(" › {} {}s", t.shown, secs));
            }
            break;
        case State::succeeded: ++done; break;
        case State::failed: ++done, ++failed; break;
        case State::restored: ++done, ++restored; break;
        case State::skipped: ++done, ++skipped; break;
        }
    }
    if (running > kMaxRunningRows)
        lines.push_back(fmt::format(" › and {} more", running - kMaxRunningRows));
    std::string counts = fmt::format("{}/{} done · {} running", done, tasks_.size(), running);
    if (failed)
        counts += fmt::format(" · {} failed", failed);
    if (restored)
        counts += fmt::format(" · {} restored", restored);
    if (skipped)
        counts += fmt::format(" · {} skipped", skipped);
    lines.push_back(counts);
    std::size_t room = options_.columns > 1 ? static_cast<std::size_t>(options_.columns - 1) : 79;
    for (auto& l : lines)
        l = cut_to(l, room);
    return lines;
}

void OutputDisplay::timer_loop()
{
    std::unique_lock lock(mutex_);
    while (!timer_stop_) {
        timer_wake_.wait_for(lock, kRefresh);
        if (timer_stop_ || closed_)
            continue;
        // Only the elapsed seconds change between events: redraw when they do.
        if (status_lines_locked() != drawn_) {
            std::string out = erase_status_locked();
            out += draw_status_locked();
            sink_(out);
        }
    }
}

void OutputDisplay::stop_timer()
{
    {
        std::lock_guard lock(mutex_);
        timer_stop_ = true;
    }
    timer_wake_.notify_all();
    if (timer_.joinable())
        timer_.join();
}

}  // namespace qk::run
