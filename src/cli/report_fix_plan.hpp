// qk report fix's plan: where each input and output a --sandbox-report suggests goes. Once in nx.json
// where many tasks need it (namedInputs.sharedGlobals, or the targetDefaults entry of their target), else
// into the file defining each task's target; files read together in one directory as one glob. Planning
// reads the workspace and writes nothing: report_fix.cpp splices the edits into each file's text.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/workspace/package_extensions.hpp"
#include "qk/workspace/workspace.hpp"
#include "report_fix_globs.hpp"

namespace qk::cli {

// Values to add to one array of one configuration file, made (with the objects on the way) where missing.
struct FixEdit {
    std::string file;               // workspace-relative: "nx.json", a project.json, a package.json
    std::vector<std::string> path;  // the objects holding the array, outermost first: {"targets", "build"}
    std::string key;                // the array: "inputs", "outputs", "sharedGlobals"
    // What the tasks took before (JSON texts), written first when the file does not name the array yet:
    // naming it replaces what targetDefaults or Nx's default gave.
    std::vector<std::string> inherited;
    std::vector<std::string> values;  // to add, in the order suggested
    bool json = false;                // values are JSON texts (a dependsOn entry), written as they are
};

struct FixPlan {
    std::vector<FixEdit> edits;        // nx.json's first, then each file's, by path; a file's in task order
    // A dependency an installed package imports without declaring it, found through pnpm's hoisting:
    // written into `extensions_file` (pnpm-workspace.yaml, or package.json for pnpm 9), sorted.
    std::vector<workspace::PackageExtension> extensions;
    std::string extensions_file;
    std::vector<std::string> by_hand;  // what is left to do by hand, a line each, printable
};

// How many tasks must need a value for it to go once into nx.json, for them all.
constexpr std::size_t kSharedTasks = 3;

// The plan for the report's suggestions in today's workspace. A value a task's declarations hold already
// (or take through sharedGlobals) is left out, so the plan after its own edits is empty. A file read that
// the key cannot hold (git-ignored) and another target's outputs do is that task in dependsOn, not an
// input (report_fix_depends.hpp). `index` is asked where files could be folded into a glob
// (report_fix_globs.hpp) and whether a file read is one the key can hold.
// With `declare_network`, a target that declares no network is given the list of hosts its tasks reached
// (`network` findings; loopback is its own and not listed).
FixPlan plan_report_fix(const audit::RunAudit& report, const workspace::Workspace& ws, const IndexSource& index,
                        bool declare_network = false);

}  // namespace qk::cli
