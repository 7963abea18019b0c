#include <algorithm>
#include <bit>

#include <fmt/core.h>

#include "qk/report/trace_summary.hpp"
#include "qk/rules/network.hpp"
#include "qk/util/printable.hpp"

namespace qk::report {

// The command's name and the reasons a recording is incomplete may quote paths: escaped as they are
// formatted (qk::printable), as the --json document keeps them whole.
std::string trace_summary(const TraceRequest& request, const record::Trace& trace)
{
    const auto& rec = trace.recording;
    std::string out;
    // One pass over the paths for every count (a large recording has tens of thousands).
    std::size_t counts[16] = {};
    for (const auto& [path, access] : rec.paths())
        for (unsigned bit = 0; bit < 16; bit++)
            counts[bit] += (access >> bit) & 1u;
    auto count = [&counts](std::uint16_t access) { return counts[std::countr_zero(access)]; };
    std::string status = trace.status.signal ? "killed by " + signal_name(trace.status.signal)
                                             : fmt::format("exit {}", trace.status.code);
    out += fmt::format("qk-trace: {} ({}, recorded with {}, {} process{})\n", printable(request.command.at(0)), status,
                       trace.recorder, rec.processes().size(), rec.processes().size() == 1 ? "" : "es");
    out += fmt::format("  {} read, {} written, {} created, {} removed, {} renamed, {} listed, {} probed, {} denied\n",
                       count(record::kRead), count(record::kWrite), count(record::kCreate), count(record::kRemove),
                       rec.renames().size(), count(record::kList), count(record::kProbe), count(record::kDenied));
    const auto& net = rec.network();
    if (!net.empty()) {
        const auto& eps = net.endpoints();
        auto loopback = std::count_if(eps.begin(), eps.end(), [](const auto& e) { return rules::is_loopback(e.first.address); });
        out += fmt::format("  {} connection{} ({} loopback), {} name{} looked up\n", eps.size(), eps.size() == 1 ? "" : "s",
                           loopback, net.lookups().size(), net.lookups().size() == 1 ? "" : "s");
    }
    if (trace.leftovers_killed)
        out += fmt::format("  {} process{} left running when the command exited, killed\n", trace.leftovers_killed,
                           trace.leftovers_killed == 1 ? " was" : "es were");
    if (!rec.complete()) {
        out += "  INCOMPLETE: this recording missed something, so it proves nothing about what the command "
               "touched:\n";
        for (const auto& r : rec.incomplete_reasons())
            out += "    - " + printable(r) + "\n";
    }
    return out;
}

}  // namespace qk::report
