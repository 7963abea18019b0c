// Rules::describe: the rules as `qk show task P:T --rules` prints them, so a user can see why an
// access was or was not allowed without reading the code that decides.

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>

#include "rules_data.hpp"

namespace qk::rules {
namespace {

std::string joined(const std::vector<std::string>& items)
{
    return items.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(items, ", "));
}

template <class Set>
std::vector<std::string> sorted(const Set& set)
{
    std::vector<std::string> out;
    for (const auto& item : set) {
        if constexpr (requires { item.first; })
            out.push_back(item.first);
        else
            out.push_back(item);
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

namespace {

// What a declared network allows, as `qk show task --rules` prints it; nothing when undeclared (open).
std::optional<RuleLine> network_line(const workspace::NetworkDeclaration& network)
{
    using Mode = workspace::NetworkDeclaration::Mode;
    switch (network.mode) {
    case Mode::undeclared: return std::nullopt;
    case Mode::any: return RuleLine{"connect", "anywhere (\"network\": true)", "its declared network: network, listed"};
    case Mode::none:
        return RuleLine{"connect", "its own loopback only (\"network\": false)",
                        "anything off the machine: undeclaredNetwork"};
    case Mode::hosts: break;
    }
    std::vector<std::string> hosts;
    for (const workspace::HostPattern& p : network.hosts)
        hosts.push_back(p.text);
    return RuleLine{"connect", joined(hosts), "its declared network; anything else off the machine: undeclaredNetwork"};
}

}  // namespace

std::vector<RuleLine> Rules::describe() const
{
    const Data& d = *d_;
    const key::TaskKey& key = *d.key;
    std::vector<RuleLine> lines;
    auto add = [&](std::string access, std::string path, std::string why) {
        lines.push_back({std::move(access), std::move(path), std::move(why)});
    };

    if (!d.outputs->patterns().empty())
        add("read, write", joined(d.outputs->patterns()), "its outputs");
    if (!d.output_directories.empty())
        add("create, remove", joined(sorted(d.output_directories)), "directories its outputs lie in");
    if (d.warm)
        add("read, write", joined(d.warm->patterns()), "its warm paths (qk:warm)");
    if (!d.scratch.empty())
        add("read, write", joined(d.scratch), "its scratch directories, emptied before it runs");
    for (const auto& group : key.groups) {
        const auto& fileset = *key.inputs.filesets.at(group.fileset);
        std::size_t n = group.files ? group.files->size() : 0;
        add("read", joined(fileset.patterns),
            fmt::format("input {} ({} file{})", fileset.origin, n, n == 1 ? "" : "s"));
    }
    if (!d.always.empty())
        add("read", joined(sorted(d.always)), "held whole by every key");
    if (!d.json_files.empty())
        add("read", joined(sorted(d.json_files)), "json inputs (their selected fields are keyed)");
    if (!d.json_targets.empty())
        add("read", joined(sorted(d.json_targets)), "the files json inputs that are links lead to");
    if (!d.dependency_output_files.empty())
        add("read", joined(sorted(d.dependency_output_files)), "dependentTasksOutputFiles");
    for (const auto& dep : d.dependency_outputs)
        if (!dep.outputs->patterns().empty())
            add("read", joined(dep.outputs->patterns()), "outputs of " + dep.task);
    if (d.ignore_reads.any_positive)
        add("read", joined(d.ignore_reads.patterns), "qk:ultracache.ignoreReads");
    if (d.ignore_dependency_reads.any_positive) {
        std::vector<std::string> from;
        for (const auto& p : d.ignore_dependency_reads.patterns)
            from.push_back("^" + p);
        add("read", joined(from), "qk:ultracache.ignoreReads, from the root of each project it depends on");
    }
    add("read, write", ".qk", "qk's state");
    add("read, write", "**/node_modules", "installed packages and what tools keep beside them");
    add("read, write", "**/.git", "allowed; reads are reported as unkeyedReads, writes among strayWrites");
    add("read", ".env, .env.*, .*.env", "dotenv files: allowed; reads are reported as unkeyedReads");

    std::vector<std::string> effect;
    for (const auto& f : key.effect_files)
        effect.push_back(fmt::format("{} ({})", f.path, f.what));
    if (!effect.empty())
        add("reported", joined(effect), "held by the key only by effect: readsOutsideInputs unless an input selects it");
    std::size_t manifests = 0;
    for (std::size_t p = 0; p < d.ws->projects().size(); ++p)
        manifests += p != d.project && !d.ws->projects()[p].package_json.empty();
    if (manifests)
        add("reported",
            fmt::format("the package.json of {} other workspace package{}", manifests, manifests == 1 ? "" : "s"),
            "manifestReads");
    add("reported", ".nvmrc, .npmrc, .tool-versions, .node-version ...", "toolchainReads");
    std::vector<std::string> deps;
    for (std::size_t p = 0; p < d.dependency_project.size(); ++p)
        if (d.dependency_project[p])
            deps.push_back(d.ws->projects()[p].name);
    if (!deps.empty())
        add("reported", "the files of " + joined(deps), "projects it depends on: dependencyReads, by project");
    if (d.installed) {
        std::size_t keyed = std::count(d.keyed_packages.begin(), d.keyed_packages.end(), true);
        add("reported",
            fmt::format("installed packages outside its key ({} of the {} installed are in it)", keyed, d.keyed_packages.size()),
            d.names_packages ? "allowed, found by their package.json: unkeyedPackages"
                             : "allowed, found by their package.json: hoistedPackages");
        if (!d.covered_importers.empty())
            add("read", "what " + joined(d.covered_importers) + " install and link to",
                "nested workspaces its globs cover");
    }
    if (auto network = network_line(d.network))
        lines.push_back(std::move(*network));
    add("reported", "tsconfig*.json", "tsconfigReads");
    add("reported", "anything else in the workspace", "reads: readsOutsideInputs; writes: strayWrites");
    add("read, write", "outside the workspace", "qk is not hermetic");
    return lines;
}

}  // namespace qk::rules
