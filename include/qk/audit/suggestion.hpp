// One thing to declare for a task's findings (audit::suggest makes them; see suggestions.hpp).
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
};

}  // namespace qk::audit
