#include <string.h>

#include "qk/util/json_writer.hpp"
#include "qk/report/trace_json.hpp"
#include "qk/rules/network.hpp"

namespace qk::report {

using record::Recording;

std::string signal_name(int signal)
{
    const char* abbrev = ::sigabbrev_np(signal);
    return abbrev ? std::string("SIG") + abbrev : "SIG" + std::to_string(signal);
}

namespace {

void exit_fields(JsonWriter& w, std::optional<int> code, std::optional<int> signal)
{
    if (signal)
        w.key("signal").value(signal_name(*signal));
    else if (code)
        w.key("exitCode").value(*code);
    // Neither: still running when the recording ended, or its end was not seen (an interrupted strace).
    // The schema has no null for it, so both are left out.
}

void files(JsonWriter& w, const Recording& rec)
{
    const auto sorted = rec.sorted_paths();
    auto list = [&](const char* key, std::uint16_t access) {
        w.key(key).begin_array();
        for (const auto* entry : sorted)
            if (entry->second & access)
                w.value(entry->first);
        w.end_array();
    };
    w.key("files").begin_object();
    list("read", record::kRead);
    list("written", record::kWrite);
    list("created", record::kCreate);
    list("removed", record::kRemove);
    w.key("renamed").begin_array();
    for (const auto& [from, to] : rec.renames())
        w.begin_object().key("from").value(from).key("to").value(to).end_object();
    w.end_array();
    list("listed", record::kList);
    list("probed", record::kProbe);
    list("denied", record::kDenied);
    w.end_object();
}

// What the command reached: the connections it opened, those to the machine itself (loopback) apart, and
// the names it looked up. A connection's host is the name whose DNS answer gave its address, when the
// command looked it up itself.
void network(JsonWriter& w, const Recording& rec)
{
    const record::NetworkUse& net = rec.network();
    auto endpoints = [&](const char* key, bool loopback) {
        w.key(key).begin_array();
        for (const auto& [to, use] : net.endpoints()) {
            if (rules::is_loopback(to.address) != loopback)
                continue;
            w.begin_object();
            w.key("address").value(to.address);
            w.key("port").value(static_cast<std::int64_t>(to.port));
            w.key("protocol").value(to.datagram ? "udp" : "tcp");
            if (auto host = net.host_of(to.address); !host.empty())
                w.key("host").value(host);
            w.key("count").value(static_cast<std::int64_t>(use.count));
            w.key("reached").value(use.reached);
            w.end_object();
        }
        w.end_array();
    };
    w.key("network").begin_object();
    endpoints("connections", false);
    endpoints("loopback", true);
    w.key("lookups").begin_array();
    for (const auto& name : net.lookups())
        w.value(name);
    w.end_array();
    w.end_object();
}

}  // namespace

std::string trace_json(const TraceRequest& request, const record::Trace& trace)
{
    const Recording& rec = trace.recording;
    JsonWriter w;
    w.begin_object();
    w.key("schemaVersion").value(1);
    w.key("command").strings(request.command);
    w.key("cwd").value(request.cwd);
    w.key("recorder").value(trace.recorder);
    exit_fields(w, trace.status.signal ? std::nullopt : std::optional<int>(trace.status.code),
                trace.status.signal ? std::optional<int>(trace.status.signal) : std::nullopt);
    w.key("complete").value(rec.complete());
    w.key("incompleteReasons").strings(rec.incomplete_reasons());
    w.key("leftoverProcessesKilled").value(trace.leftovers_killed);
    w.key("processes").begin_array();
    for (const auto& [pid, p] : rec.processes()) {
        w.begin_object();
        w.key("pid").value(static_cast<std::int64_t>(pid));
        w.key("ppid").value(static_cast<std::int64_t>(p.ppid));
        w.key("argv").strings(p.argv);
        exit_fields(w, p.exit_code, p.signal);
        w.end_object();
    }
    w.end_array();
    files(w, rec);
    network(w, rec);
    w.end_object();
    return std::move(w).take_line();
}

}  // namespace qk::report
