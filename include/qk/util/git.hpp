// git asked something in a directory: what changed since a base (qk affected), the commit checked out
// (every report's run). Each git qk runs is told, on its command line, to run nothing that configuration
// names: a task may have written .git/config (docs/qk.md, "The git qk runs").
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk {

// Runs `git -C root args...` (args[0] the subcommand) with the configuration below: its stdout, or an
// error with what it printed. Its stderr is kept apart: a warning there ("refname is ambiguous") is no
// output.
Result<std::string> git(const std::filesystem::path& root, const std::vector<std::string>& args);

// What git's command line must say so that git runs no program named by configuration (command-line
// configuration wins over every file): no fsmonitor hook or daemon, no hooks, no gpg, no transport (a partial
// clone's lazy fetch would run ssh or a credential helper), no pager, and for diff, log and show no
// external diff, no textconv and no git run inside submodules (it would read their own configuration).
// `filter_overrides` (git_filter_overrides) empty the filter drivers configuration names.
std::vector<std::string> git_command_line(const std::filesystem::path& root, const std::vector<std::string>& args,
                                          const std::vector<std::string>& filter_overrides);

// From `git config -z --name-only --get-regexp '^filter\.'`'s output: `-c filter.<driver>.clean=` and the
// like for each driver named, so that git cleans and smudges nothing through a program (an empty command
// is no filter). An error for a driver whose name git's -c cannot spell (it holds '=').
Result<std::vector<std::string>> git_filter_overrides(std::string_view config_names);

}  // namespace qk
