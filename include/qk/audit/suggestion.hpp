// One thing to declare for a task's findings (audit::suggest makes them; see suggestions.hpp), and one
// change in nx.json for what many tasks read (audit::suggest_shared).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace qk::audit {

struct Suggestion {
    std::string finding;  // the kind it answers: "strayWrites", "readsOutsideInputs", ...
    std::string declare;  // where: "outputs", "inputs", "externalDependencies", "packageExtensions"
    std::vector<std::string> values;  // what to add there
    // For reads: what to name in qk:ultracache.ignoreReads instead, if they cannot change the result.
    std::vector<std::string> or_ignore;
    std::size_t paths = 0;  // how many paths of the findings it answers: "it" or "they"
    // Why ignoreReads likely fits better than the inputs (one tool reading the same file in every
    // sibling directory, only to find paths); empty when qk cannot tell.
    std::string prefer_ignore;
    // What the values replace in the target (a declared file output that Landlock alone cannot create,
    // replaced by its directory); empty for an addition.
    std::vector<std::string> in_place_of;
};

// What many tasks read, declared once in nx.json: a named input ("sharedGlobals") that `default` holds,
// rather than the same input in each target; or, where `prefer_ignore` says so, qk:ultracache.ignoreReads
// in the targetDefaults of `targets`.
struct SharedSuggestion {
    std::string named_input = "sharedGlobals";
    std::vector<std::string> values;     // {workspaceRoot}/... paths and globs
    std::vector<std::string> or_ignore;  // those that may go in ignoreReads instead (not files held by effect)
    std::string prefer_ignore;           // as Suggestion::prefer_ignore
    std::vector<std::string> targets;    // the target names of the tasks that read them, sorted
    std::size_t tasks = 0;               // how many tasks read them
};

}  // namespace qk::audit
