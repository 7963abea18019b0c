// git asked something in a directory: what changed since a base (qk affected), the commit checked out
// (every report's run).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "qk/util/result.hpp"

namespace qk {

// Runs `git -C root args...`: its stdout, or an error with what it printed. Its stderr is kept apart: a
// warning there ("refname is ambiguous") is no output.
Result<std::string> git(const std::filesystem::path& root, const std::vector<std::string>& args);

}  // namespace qk
