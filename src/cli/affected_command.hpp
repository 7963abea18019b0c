// qk affected: run targets of the projects a git change touches, and of the projects that depend on them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "run_command.hpp"

namespace qk::cli {

struct AffectedOptions {
    RunOptions run;                    // targets, exclude, and how to run
    std::string base;                  // --base: else nx.json's defaultBase, else main
    std::optional<std::string> head;   // --head: else the working tree against the base
    std::vector<std::string> files;    // --files: the changed files, instead of asking git
};

int run_affected(const AffectedOptions& options);

}  // namespace qk::cli
