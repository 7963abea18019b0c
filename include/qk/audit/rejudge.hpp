// Re-judging what a stored report found (qk report check): each access a task's findings hold asked again
// of the task's Rules as today's declarations build them, without running anything. The one rule builder
// decides, as it did when the task ran.
#pragma once

#include <string>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/rules/rules.hpp"

namespace qk::audit {

struct Rejudged {
    TaskFindings still;    // what today's declarations still do not allow, and enforce would refuse
    TaskFindings covered;  // what they allow now
    // What they do not cover but enforce lets through (rules::enforce_allows: installed packages, .git and
    // dotenv reads): said, not counted against the task, as the audit's count leaves them out.
    TaskFindings allowed;
    // The kinds in `still` or `allowed` that no declaration can cover from a report alone: installed
    // packages (a report names them, not their files: a run re-judges them), refusals outside the
    // workspace, system calls.
    std::vector<std::string> not_rejudged;
    // Reads in `still` that an input names while the key holds no such file (declared_unkeyed), sorted.
    std::vector<std::string> declared_unkeyed;
    bool ok() const { return still.empty(); }
};

// `found` as a report gives it (workspace-relative paths); `root` is the workspace's canonical root.
// Temporary files and replaced reads are not the task's going beyond, nor are reads and writes in .git
// (enforce allows them; no declaration covers them): they are left out of all three. A read allowed only
// by the text of a declaration while the key holds no such file (a literal input naming a git-ignored
// build output) is still unexpected: rules::Rules::declared_unkeyed.
Rejudged rejudge(const TaskFindings& found, const rules::Rules& rules, const std::string& root);

}  // namespace qk::audit
