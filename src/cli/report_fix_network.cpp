// qk report fix's network edit (report_fix_network.hpp).
#include "report_fix_network.hpp"

#include <algorithm>

#include "qk/audit/network_findings.hpp"
#include "qk/rules/network.hpp"
#include "qk/workspace/json_edit.hpp"

namespace qk::cli {

std::optional<FixEdit> network_edit(const workspace::Project& project, const workspace::Target& target,
                                    const std::string& file, const std::vector<std::string>& entries)
{
    const workspace::NetworkDeclaration& now = target.sandbox.network;
    std::vector<std::string> values;
    for (const std::string& entry : entries) {
        auto parsed = audit::parse_network_entry(entry);
        // Allowed already (the plan after its own edits is empty), or no host:port to write. Undeclared
        // allows all: what it reached is asked to become its list.
        const bool undeclared = now.mode == workspace::NetworkDeclaration::Mode::undeclared;
        if (!parsed || (!undeclared && rules::network_allows(now, parsed->host, parsed->port)))
            continue;
        if (std::find(values.begin(), values.end(), entry) == values.end())
            values.push_back(entry);
    }
    if (values.empty())
        return std::nullopt;
    std::vector<std::string> path{"targets", target.name, "qk:sandbox"};
    if (file == project.package_json)
        path.insert(path.begin(), "nx");
    // A list the target takes from targetDefaults or nx.json is written first: naming the key in the target
    // replaces what it took. Taken false leaves nothing to keep.
    std::vector<std::string> inherited;
    if (now.mode == workspace::NetworkDeclaration::Mode::hosts)
        for (const workspace::HostPattern& p : now.hosts)
            inherited.push_back(workspace::json_string(p.text));
    return FixEdit{file, std::move(path), "network", std::move(inherited), std::move(values), false};
}

}  // namespace qk::cli
