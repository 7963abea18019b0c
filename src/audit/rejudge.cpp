// rejudge (qk/audit/rejudge.hpp): each kind of finding asked again as the access it was, a read or a write.
#include "qk/audit/rejudge.hpp"

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
    auto judge = [&](const std::string& path, bool write) {
        std::string absolute = path.empty() ? root : root + "/" + path;
        rules::Verdict v = write ? rules.write(absolute, false) : rules.read(absolute);
        return v.finding == rules::Finding::none;
    };
    for (List list : kReads)
        for (const std::string& path : found.*list)
            if (special_tree(path) != SpecialDir::git)  // allowed, never keyed: nothing to declare
                ((judge(path, false) ? out.covered : out.still).*list).push_back(path);
    for (List list : kWrites)
        for (const std::string& path : found.*list)
            ((judge(path, true) ? out.covered : out.still).*list).push_back(path);
    for (const auto& [project, paths] : found.dependency_reads)
        for (const std::string& path : paths)
            (judge(path, false) ? out.covered : out.still).dependency_reads[project].push_back(path);
    // Named, not placed: what a report cannot ask the rules about stays as it was found.
    const std::pair<List, const char*> kept[] = {
        {&TaskFindings::unkeyed_packages, "unkeyedPackages"}, {&TaskFindings::hoisted_packages, "hoistedPackages"},
        {&TaskFindings::refused_unplaced, "refusedUnplaced"}, {&TaskFindings::refused_outside, "refusedOutside"},
        {&TaskFindings::refused_calls, "refusedCalls"},
    };
    for (const auto& [list, name] : kept)
        if (!(found.*list).empty()) {
            out.still.*list = found.*list;
            out.not_rejudged.emplace_back(name);
        }
    return out;
}

}  // namespace qk::audit
