// rejudge (qk/audit/rejudge.hpp): each kind of finding asked again as the access it was, a read or a write.
#include "qk/audit/rejudge.hpp"

#include <algorithm>

#include "qk/audit/finding_kinds.hpp"
#include "qk/audit/network_findings.hpp"
#include "qk/util/special_names.hpp"

namespace qk::audit {
namespace {

// The network entries asked again of today's declaration, as the audit asks them: one it allows is
// covered where a declaration names it, allowed where the network is open (as undeclared it was listed,
// not counted); one it does not is still going beyond, whichever list it was found in (a connection an
// open network allowed, now outside a declared false or list, is what enforce would give no route).
void rejudge_network(const TaskFindings& found, const workspace::NetworkDeclaration& declared, Rejudged& out)
{
    for (const FindingKind& kind : finding_kinds()) {
        if (kind.rejudge != Rejudge::network)
            continue;
        for (const std::string& entry : found.*kind.list) {
            if (!network_entry_allowed(declared, found, entry))
                out.still.undeclared_network.push_back(entry);
            else
                ((declared.open() ? out.allowed : out.covered).*kind.list).push_back(entry);
        }
    }
    for (TaskFindings* f : {&out.still, &out.covered, &out.allowed})
        for (std::vector<std::string>* list : {&f->network, &f->undeclared_network})
            std::sort(list->begin(), list->end());
    out.still.undeclared_network.erase(
        std::unique(out.still.undeclared_network.begin(), out.still.undeclared_network.end()),
        out.still.undeclared_network.end());
}

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
    // Reads and writes of workspace paths are what a declaration can cover. Reads in .git are left out,
    // as writes in .git are (git_writes is no kind: strayWrites holds them in the report): enforce allows
    // them and no declaration can cover them, so counted they would keep a task from ever being ok.
    for (const FindingKind& kind : finding_kinds()) {
        if (kind.rejudge != Rejudge::read && kind.rejudge != Rejudge::write)
            continue;
        const bool write = kind.rejudge == Rejudge::write;
        if (!kind.list) {  // dependencyReads
            for (const auto& [project, paths] : found.dependency_reads)
                for (const std::string& path : paths)
                    judge(path, write).dependency_reads[project].push_back(path);
            continue;
        }
        for (const std::string& path : found.*kind.list)
            if (write || special_tree(path) != SpecialDir::git)  // allowed, never keyed: nothing to declare
                (judge(path, write).*kind.list).push_back(path);
    }
    rejudge_network(found, rules.network(), out);
    std::sort(out.declared_unkeyed.begin(), out.declared_unkeyed.end());
    out.declared_unkeyed.erase(std::unique(out.declared_unkeyed.begin(), out.declared_unkeyed.end()),
                               out.declared_unkeyed.end());
    // Named, not placed: what a report cannot ask the rules about stays as it was found, counted as the
    // audit counts it.
    for (const FindingKind& kind : finding_kinds())
        if (kind.rejudge == Rejudge::kept && kind.in(found)) {
            TaskFindings& to =
                kind.rule != rules::Finding::none && rules::enforce_allows(kind.rule) ? out.allowed : out.still;
            to.*kind.list = found.*kind.list;
            out.not_rejudged.emplace_back(kind.name);
        }
    return out;
}

}  // namespace qk::audit
