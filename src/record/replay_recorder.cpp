#include "replay_recorder.hpp"

#include <fstream>
#include <unordered_map>

#include <fmt/core.h>
#include <simdjson.h>

#include "qk/record/recording_sink.hpp"
#include "qk/record/process.hpp"
#include "stop_window.hpp"

namespace qk::record {
namespace {

using simdjson::ondemand::object;

const std::unordered_map<std::string_view, FsOpKind> kFsOps = {
    {"open", FsOpKind::open},     {"rename", FsOpKind::rename},   {"link", FsOpKind::link},
    {"unlink", FsOpKind::unlink}, {"rmdir", FsOpKind::rmdir},     {"mkdir", FsOpKind::mkdir},
    {"symlink", FsOpKind::symlink}, {"truncate", FsOpKind::truncate}, {"chdir", FsOpKind::chdir},
    {"execfail", FsOpKind::exec},
};

// Optional fields read with a default; a field of the wrong type is an error.
struct Fields {
    object& obj;
    std::int64_t num(std::string_view key, std::int64_t fallback = 0)
    {
        auto v = obj.find_field_unordered(key);
        return v.error() == simdjson::NO_SUCH_FIELD ? fallback : v.get_int64().value();
    }
    std::string str(std::string_view key)
    {
        auto v = obj.find_field_unordered(key);
        return v.error() == simdjson::NO_SUCH_FIELD ? std::string() : std::string(v.get_string().value());
    }
    bool flag(std::string_view key)
    {
        auto v = obj.find_field_unordered(key);
        return v.error() == simdjson::NO_SUCH_FIELD ? false : v.get_bool().value();
    }
};

// A payload written as hex ("00350001..."), two digits a byte; a stray digit is left out.
std::string from_hex(std::string_view hex)
{
    auto digit = [](char c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; };
    std::string out;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        out += static_cast<char>(digit(hex[i]) * 16 + digit(hex[i + 1]));
    return out;
}

void replay_line(object& obj, RecordingSink& sink, Trace& trace)
{
    Fields f{obj};
    std::string op = f.str("op");
    if (auto it = kFsOps.find(op); it != kFsOps.end()) {
        FsOp ev;
        ev.kind = it->second;
        ev.pid = static_cast<pid_t>(f.num("pid"));
        ev.result = f.num("result");
        ev.flags = static_cast<std::uint32_t>(f.num("flags"));
        ev.resolved = f.str("resolved");
        ev.a = PathArg{f.str("base"), f.str("name")};
        ev.b = PathArg{f.str("base2"), f.str("name2")};
        ev.created = f.flag("created");
        ev.created_known = true;
        ev.directory = f.flag("directory");
        sink.on_fs(ev);
    } else if (op == "fork") {
        sink.on_fork(ProcFork{static_cast<pid_t>(f.num("parent")), static_cast<pid_t>(f.num("child"))});
    } else if (op == "exec") {
        ProcExec ev;
        ev.pid = static_cast<pid_t>(f.num("pid"));
        ev.ppid = static_cast<pid_t>(f.num("ppid"));
        ev.file = PathArg{f.str("base"), f.str("name")};
        ev.resolved = f.str("resolved");
        auto argv = obj.find_field_unordered("argv");
        if (argv.error() != simdjson::NO_SUCH_FIELD)
            for (auto a : argv.get_array().value())
                ev.argv.emplace_back(a.get_string().value());
        sink.on_exec(ev);
    } else if (op == "exit") {
        sink.on_exit(ProcExit{static_cast<pid_t>(f.num("pid")), static_cast<int>(f.num("status"))});
    } else if (op == "connect" || op == "send" || op == "recv") {
        NetOp ev;
        ev.kind = op == "connect" ? NetOpKind::connect : op == "send" ? NetOpKind::send : NetOpKind::recv;
        ev.pid = static_cast<pid_t>(f.num("pid"));
        ev.fd = static_cast<int>(f.num("fd", -1));
        ev.result = f.num("result");
        ev.datagram = f.flag("udp");
        ev.address = f.str("address");
        ev.port = static_cast<std::uint16_t>(f.num("port"));
        ev.payload = from_hex(f.str("payload"));
        sink.on_net(ev);
    } else if (op == "incomplete") {
        sink.mark_incomplete(f.str("reason"));
    } else if (op == "command") {
        trace.status.code = static_cast<int>(f.num("exitCode"));
        trace.status.signal = static_cast<int>(f.num("signal"));
    } else {
        throw simdjson::simdjson_error(simdjson::INCORRECT_TYPE);
    }
}

}  // namespace

Result<Trace> ReplayRecorder::record(const Command& cmd)
{
    std::ifstream in(path_);
    if (!in)
        return sys_error(fmt::format("cannot read the recorded events '{}'", path_));
    // Nothing runs, but callers see the same start and finish as under the real engines.
    StopWindow window(cmd, [](bool) {});
    Trace trace;
    trace.recorder = "replay";
    RecordingSink sink(trace.recording, cmd);
    simdjson::ondemand::parser parser;
    std::string line;
    for (int number = 1; std::getline(in, line); number++) {
        if (line.find_first_not_of(" \t\r") == std::string::npos)
            continue;
        try {
            simdjson::padded_string padded(line);
            auto doc = parser.iterate(padded);
            object obj = doc.get_object();
            replay_line(obj, sink, trace);
        } catch (const simdjson::simdjson_error& e) {
            return error(fmt::format("{}:{}: not a recorded event ({}): {}. Each line must be one JSON object "
                                     "with a known \"op\" (see src/record/replay_recorder.hpp)",
                                     path_, number, e.what(), line.substr(0, 120)));
        }
    }
    return trace;
}

}  // namespace qk::record
