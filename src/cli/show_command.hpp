// qk show: how a user debugs the workspace and a key (projects, a project, a task's inputs and key).
#pragma once

#include <string>

namespace qk::cli {

struct ShowOptions {
    enum class What { projects, project, task };
    What what = What::projects;
    std::string name;  // the project, or the task "project:target"
    bool json = false;
    bool rules = false;  // show task --rules: what the sandbox lets the task do
    std::string directory = ".";
};

// Prints to stdout; returns the exit status. Errors are thrown as FatalError.
int run_show(const ShowOptions& options);

}  // namespace qk::cli
