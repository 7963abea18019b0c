// Glob matching of names and workspace-relative paths for the configuration model (workspace package
// globs, targetDefaults glob keys, dependsOn target wildcards, project patterns), through
// qk::workspace::Glob. Nx matches these with minimatch; Glob follows Nx's globset, which agrees on
// every form they take here (*, **, ?, classes, braces), and matches dotfiles as findMatchingProjects'
// {dot: true} does.
#pragma once

#include <string_view>

namespace qk::workspace::detail {

// Nx's isGlobPattern (nx/src/utils/globs.ts): any of * | { } ( ) [.
bool is_glob_pattern(std::string_view s);

// Whether `text` matches `pattern` (compiled once per pattern and thread); a pattern that does not
// compile matches nothing.
bool glob_matches(std::string_view pattern, std::string_view text);

}  // namespace qk::workspace::detail
