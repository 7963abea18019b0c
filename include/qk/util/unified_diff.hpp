// The change from one text to another as a unified diff (diff -u, git apply): what qk report fix prints.
#pragma once

#include <string>
#include <string_view>

namespace qk {

// "--- a/<path>\n+++ b/<path>\n" and a hunk for each group of changed lines, with three lines of context
// each side (hunks whose context would meet are one); "" when the texts are the same.
std::string unified_diff(std::string_view before, std::string_view after, std::string_view path);

}  // namespace qk
