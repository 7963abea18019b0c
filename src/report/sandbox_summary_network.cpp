// The audit summary's lines for what a task reached on the network (summary_lines.hpp): what its declared
// network does not name, going beyond; what it allows, and the machine's own, listed as the spec keeps the
// network open.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/util/printable.hpp"
#include "summary_lines.hpp"

namespace qk::report::summary {

using audit::TaskFindings;

namespace {

std::string joined(const std::vector<std::string>& entries)
{
    std::vector<std::string> shown;
    shown.reserve(entries.size());
    for (const std::string& e : entries)
        shown.push_back(printable(e));
    return fmt::format("{}", fmt::join(shown, ", "));
}

}  // namespace

std::string undeclared_network_lines(const TaskFindings& f)
{
    std::string out;
    if (!f.undeclared_network.empty())
        path_list(out, said(&TaskFindings::undeclared_network, f.undeclared_network.size()) + ":",
                  f.undeclared_network);
    return out;
}

std::string open_network_lines(const TaskFindings& f)
{
    std::string out;
    // One line each: hosts a build reaches are few, and the report's connections say the rest.
    if (!f.network.empty())
        out += fmt::format("    {}, which its declared network allows: {}\n",
                           said(&TaskFindings::network, f.network.size()), joined(f.network));
    if (!f.loopback_network.empty())
        out += fmt::format("    {}, not judged: {}\n", said(&TaskFindings::loopback_network, f.loopback_network.size()),
                           joined(f.loopback_network));
    return out;
}

}  // namespace qk::report::summary
