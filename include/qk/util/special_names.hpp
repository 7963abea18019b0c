// The directories qk treats apart wherever they are: Git's (.git), qk's own state (.qk) and installed
// packages (node_modules). One definition, with one case rule: a name matches whatever its ASCII case,
// because on the case-insensitive file systems where workspaces are also checked out (macOS),
// Node_Modules is the same directory as node_modules.
#pragma once

#include <string_view>

namespace qk {

enum class SpecialDir { none, git, qk, node_modules };

// Which special directory a single path component names.
SpecialDir special_dir(std::string_view name);
inline bool is_special_dir(std::string_view name) { return special_dir(name) != SpecialDir::none; }

// The special directory a '/'-separated workspace-relative path lies in or is, in one scan: .qk as its
// first component (qk's state, whatever it holds), else .git anywhere (a package's own .git is still
// Git's), else node_modules anywhere.
SpecialDir special_tree(std::string_view path);

// ASCII case-insensitive equality, the rule above.
bool equals_ignoring_case(std::string_view a, std::string_view b);

}  // namespace qk
