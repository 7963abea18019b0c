// rejudge (qk/audit/rejudge.hpp): each kind of finding asked again as the access it was, a read or a write.
#include "qk/audit/rejudge.hpp"

#include <algorithm>
#include <tuple>

#include "qk/util/special_names.hpp"

namespace qk::audit {

namespace {

using List = std::vector<std::string> TaskFindings::*;

// Reads and writes of workspace paths: what a declaration can cover.
constexpr List kReads[] = {&TaskFindings::reads_outside_inputs, &TaskFindings::tsconfig_reads,
                           &TaskFindings::unkeyed_reads,        &TaskFindings::manifest_reads,
                           &TaskFindings::toolchain_reads,      &TaskFindings::refused_reads};
// Writes in .git (git_writes) are left out, as reads in .git are below: enforce allows them and no
// declaration can cover them, so counted they would keep a task from ever being ok.
constexpr List kWrites[] = {&TaskFindings::stray_writes, &TaskFindings::discarded_writes,
                            &TaskFindings::refused_writes};

}  // namespace

Rejudged rejudge(const TaskFindings& found, const rules::Rules& rules, const std::string& root)
{
    Rejudged out;
    // Where an access goes: covered by a declaration that the key follows, still going beyond, or not
    // covered but let through by enforce (which the audit does not count either).
    auto judge = [&](const std::string& path, bool write) -> TaskFindings& {
        std::string absolute = path.empty() ? root : root + "/" + path;
        rules::Verdict v = write ? rules.write(absolute, false) : rules.read(absolute);
        if (v.finding == rules::Finding::none) {
            if (write || !rules.declared_unkeyed(absolute))
                return out.covered;
            out.declared_unkeyed.push_back(path);
            return out.still;
        }
        return rules::enforce_allows(v.finding) ? out.allowed : out.still;
    };
    for (List list : kReads)
        for (const std::string& path : found.*list)
            if (special_tree(path) != SpecialDir::git)  // allowed, never keyed: nothing to declare
                (judge(path, false).*list).push_back(path);
    for (List list : kWrites)
        for (const std::string& path : found.*list)
            (judge(path, true).*list).push_back(path);
    for (const auto& [project, paths] : found.dependency_reads)
        for (const std::string& path : paths)
            judge(path, false).dependency_reads[project].push_back(path);
    // Named, not placed: what a report cannot ask the rules about stays as it was found, counted as the
    // audit counts it.
    const std::tuple<List, const char*, rules::Finding> kept[] = {
        {&TaskFindings::unkeyed_packages, "unkeyedPackages", rules::Finding::unkeyed_package},
        {&TaskFindings::hoisted_packages, "hoistedPackages", rules::Finding::hoisted_package},
        {&TaskFindings::refused_unplaced, "refusedUnplaced", rules::Finding::none},
        {&TaskFindings::refused_outside, "refusedOutside", rules::Finding::none},
        {&TaskFindings::refused_calls, "refusedCalls", rules::Finding::none},
    };
    std::sort(out.declared_unkeyed.begin(), out.declared_unkeyed.end());
    out.declared_unkeyed.erase(std::unique(out.declared_unkeyed.begin(), out.declared_unkeyed.end()),
                               out.declared_unkeyed.end());
    for (const auto& [list, name, finding] : kept)
        if (!(found.*list).empty()) {
            TaskFindings& to = finding != rules::Finding::none && rules::enforce_allows(finding) ? out.allowed
                                                                                                  : out.still;
            to.*list = found.*list;
            out.not_rejudged.emplace_back(name);
        }
    return out;
}

}  // namespace qk::audit
