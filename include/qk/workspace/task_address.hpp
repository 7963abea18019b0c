// A task as people write it on the command line: project:target[:configuration]. Target names often
// hold colons themselves (test:types, build:docs), so the text is read against the workspace, as Nx's
// splitTarget does: the first segment is the project, then the longest run of segments that names one
// of its targets, and what is left is the configuration.
#pragma once

#include <string>
#include <string_view>

#include "qk/util/result.hpp"
#include "qk/workspace/workspace.hpp"

namespace qk::workspace {

struct TaskAddress {
    std::string project;
    std::string target;
    std::string configuration;  // "" when none was written
    // When the text could also be read another way (target "test" with configuration "types" as well as
    // target "test:types"), what was chosen and how to write the other; "" when it could not.
    std::string ambiguity;
};

// Errors (prefixed "<command>: " unless it is empty): no colon, an empty part, an unknown project. An unknown target is left
// for the task graph to name with the project's targets.
Result<TaskAddress> parse_task_address(std::string_view text, const Workspace& ws, std::string_view command);

}  // namespace qk::workspace
