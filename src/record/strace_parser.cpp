// The line machinery of the strace parser: who a line belongs to, calls strace split in two, exit
// lines, and the lines of new processes that show up before their parent's fork returned.
#include "strace_parser.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/core.h>

#include "strace_names.hpp"

namespace qk::record {
namespace {

constexpr std::string_view kUnfinished = " <unfinished ...>";

// The line as an error message can show it: cut short, control bytes made visible.
std::string printable(std::string_view text)
{
    constexpr std::size_t kMax = 200;
    std::string out;
    for (char c : text.substr(0, kMax))
        out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? '?' : c;
    if (text.size() > kMax)
        out += "...";
    return out;
}

bool parse_int(std::string_view s, int& out)
{
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

}  // namespace

bool StraceParser::is_fork_call(std::string_view name)
{
    return name == "fork" || name == "vfork" || name == "clone" || name == "clone3";
}

StraceParser::StraceParser(RecordingSink& sink, std::string root_cwd, pid_t root_pid)
    : sink_(sink), root_cwd_(std::move(root_cwd)), root_(root_pid)
{
}

std::vector<pid_t> StraceParser::live_processes() const
{
    std::vector<pid_t> out;
    for (const auto& [tid, task] : tasks_)
        if (task.tgid == tid)
            out.push_back(tid);
    std::sort(out.begin(), out.end());
    return out;
}

Status StraceParser::feed(std::string_view line)
{
    std::size_t number = ++line_;
    Status status = take(number, line);
    if (!held_.empty() && !fork_pending()) {
        Status released = release_orphans();
        if (status.ok() && !released.ok())
            status = released;
    }
    return status;
}

Status StraceParser::finish()
{
    // A call still cut at the end never returned: its process died in it.
    unfinished_.clear();
    return release_orphans();
}

StraceParser::Task& StraceParser::add_task(pid_t tid, pid_t tgid, pid_t ppid, std::shared_ptr<std::string> cwd)
{
    auto [it, inserted] = tasks_.insert_or_assign(tid, Task{tgid, ppid, std::move(cwd)});
    return it->second;
}

Status StraceParser::take(std::size_t number, std::string_view line)
{
    if (line.empty() || line.starts_with("strace: "))
        return {};  // strace's own messages, when its stderr is mixed in
    auto [pid, body] = strace::split_pid_prefix(line);
    if (pid == 0) {
        // strace drops the prefix while it traces a single task.
        if (tasks_.size() == 1)
            pid = tasks_.begin()->first;
        else if (root_ != 0)
            pid = root_;
        else
            return error(fmt::format("strace output, line {}: a line without a pid before any pid is known "
                                     "(record with strace -o FILE, which prefixes every line): {}",
                                     number, printable(line)));
    }
    if (!tasks_.contains(pid)) {
        if (!root_started_ && (root_ == 0 || root_ == pid)) {
            root_ = pid;
            root_started_ = true;
            add_task(pid, pid, 0, std::make_shared<std::string>(root_cwd_));
        } else if (held_.contains(pid) || fork_pending()) {
            // Its parent's fork has not returned yet: its parent and cwd are not known.
            held_[pid].push_back({number, std::string(body)});
            return {};
        } else if (body.starts_with("+++ ") || body.starts_with("--- ")) {
            return {};  // a thread ending (or signalled) after its process ended or exec'd
        } else {
            add_task(pid, pid, 0, std::make_shared<std::string>());
        }
    }
    return handle(pid, body, number);
}

Status StraceParser::handle(pid_t tid, std::string_view body, std::size_t number)
{
    Status status = dispatch(tid, body);
    if (!status.ok())
        return error(fmt::format("strace output, line {}: {}; the line: {}", number, status.error().message,
                                 printable(body)));
    return status;
}

Status StraceParser::dispatch(pid_t tid, std::string_view body)
{
    if (body.starts_with("+++ "))
        return on_status(tid, body);
    if (body.starts_with("--- ") || body.starts_with("[ Process "))
        return {};  // signals delivered; personality changes
    if (body.starts_with("<... ")) {
        std::string_view rest = body.substr(5);
        auto end = rest.find(" resumed>");
        if (end == std::string_view::npos)
            return error("a resumed call without 'resumed>'");
        std::string_view name = rest.substr(0, end);
        rest.remove_prefix(end + 9);
        auto it = unfinished_.find(tid);
        if (it == unfinished_.end() || strace::call_name(it->second) != name)
            return error(fmt::format("{} resumed, but pid {} has no unfinished {} call", name, tid, name));
        std::string text = std::move(it->second);
        unfinished_.erase(it);
        if (rest.ends_with(kUnfinished)) {
            text += rest.substr(0, rest.size() - kUnfinished.size());
            unfinished_[tid] = std::move(text);
            return {};
        }
        text += rest;
        return on_call(tid, text);
    }
    // A call strace could not name, as it prints for a process SIGKILLed at its entry (a leftover we
    // kill): like any call that never returned, there is nothing to record.
    if (body.starts_with("?\?\?(") && body.ends_with("= ?"))
        return {};
    if (strace::call_name(body).empty())
        return error("not a line strace writes");
    if (body.ends_with(kUnfinished)) {
        unfinished_[tid] = std::string(body.substr(0, body.size() - kUnfinished.size()));
        return {};
    }
    // A thread's execve: the call returns in the thread group leader, whose pid the thread takes.
    if (auto at = body.rfind(" <pid changed to "); at != std::string_view::npos && body.ends_with(" ...>")) {
        std::string_view number = body.substr(at + 17);
        int leader = 0;
        if (!parse_int(number.substr(0, number.find(' ')), leader) || leader <= 0)
            return error("a malformed '<pid changed to N ...>'");
        unfinished_[leader] = std::string(body.substr(0, at));
        return {};
    }
    return on_call(tid, body);
}

void StraceParser::name_unfinished_exec(pid_t tgid, std::string_view call_text)
{
    // A process killed in execve before strace printed its return: a leftover the run kills as its exec
    // ends (its parent saw a close-on-exec descriptor close, so the exec had taken). What it read is not
    // known and is not recorded; its command line still names it beside what it did, when it had none.
    std::string_view name = strace::call_name(call_text);
    if (name != "execve" && name != "execveat")
        return;
    // Its arguments are whole (printed at entry); the call's views point into `text`, kept meanwhile.
    const std::string text = std::string(call_text) + ") = ?";
    auto call = strace::parse_call(text);
    if (!call || call->args.size() < (name == "execveat" ? 3u : 2u))
        return;
    auto argv = strace::parse_string_array(call->args[name == "execveat" ? 2 : 1]);
    Process& p = sink_.recording().process(tgid);
    if (argv && p.argv.empty())
        p.argv = std::move(*argv);
}

Status StraceParser::on_status(pid_t tid, std::string_view body)
{
    if (!body.ends_with(" +++") || body.size() < 8)
        return error("a '+++' line that does not end with '+++'");
    std::string_view what = body.substr(4, body.size() - 8);
    if (what.starts_with("exited with ")) {
        int code = 0;
        if (!parse_int(what.substr(12), code))
            return error("an exit code that is not a number");
        on_exit(tid, (code & 0xff) << 8);
        return {};
    }
    if (what.starts_with("killed by ")) {
        std::string_view name = what.substr(10);
        bool core = name.ends_with(" (core dumped)");
        if (core)
            name.remove_suffix(14);
        int signal = 0;
        if (auto named = strace::signal_number(name))
            signal = *named;
        else if (!parse_int(name, signal) || signal <= 0 || signal >= 128)
            return error("an unknown signal");
        on_exit(tid, signal | (core ? 0x80 : 0));
        return {};
    }
    if (what.starts_with("superseded by execve"))
        return {};  // the leader's pid lives on in the thread that exec'd
    return error("an unknown '+++' line");
}

void StraceParser::on_exit(pid_t tid, int wait_status)
{
    auto pending = unfinished_.find(tid);
    auto it = tasks_.find(tid);
    if (pending != unfinished_.end() && it != tasks_.end())
        name_unfinished_exec(it->second.tgid, pending->second);
    if (pending != unfinished_.end())
        unfinished_.erase(pending);
    if (it == tasks_.end())
        return;
    if (it->second.tgid == tid) {
        sink_.on_exit(ProcExit{tid, wait_status});
        if (tid == root_)
            root_status_ = wait_status;
    }
    // Threads of the process stay until their own exit lines: their pids are not free before.
    tasks_.erase(it);
}

bool StraceParser::fork_pending() const
{
    return std::any_of(unfinished_.begin(), unfinished_.end(),
                       [](const auto& entry) { return is_fork_call(strace::call_name(entry.second)); });
}

Status StraceParser::release_held(pid_t child)
{
    auto it = held_.find(child);
    if (it == held_.end())
        return {};
    std::vector<HeldLine> lines = std::move(it->second);
    held_.erase(it);
    Status first;
    for (const auto& line : lines) {
        Status s = handle(child, line.body, line.number);
        if (first.ok() && !s.ok())
            first = s;
    }
    return first;
}

Status StraceParser::release_orphans()
{
    // No fork is pending any more, so no parent will claim these: decode them, oldest first, as
    // processes of unknown parent and cwd.
    std::vector<std::pair<std::size_t, pid_t>> order;
    for (const auto& [pid, lines] : held_)
        order.emplace_back(lines.front().number, pid);
    std::sort(order.begin(), order.end());
    Status first;
    for (auto [number, pid] : order) {
        auto it = held_.find(pid);
        if (it == held_.end())
            continue;
        if (!tasks_.contains(pid)) {
            if (const auto& first = it->second.front().body; first.starts_with("+++ ") || first.starts_with("--- ")) {
                held_.erase(it);
                continue;
            }
            add_task(pid, pid, 0, std::make_shared<std::string>());
        }
        Status s = release_held(pid);
        if (first.ok() && !s.ok())
            first = s;
    }
    return first;
}

}  // namespace qk::record
