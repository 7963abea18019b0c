// How far a name the user typed is from the names that exist, for "did you mean" in an error: a
// misspelled project or target (`qk run app:biuld`) is answered with the closest real ones.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace qk {

// The optimal string alignment distance (Damerau-Levenshtein without reusing a transposed pair): the
// fewest insertions, deletions, substitutions and swaps of two adjacent bytes turning `a` into `b`.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidates closest to `name`, at most `limit`, in name order: those at the smallest distance
// found, when it is at most max(2, size/3) and less than the name's size (so that "zz" suggests no "a").
// Empty when none is that close.
std::vector<std::string> closest_names(std::string_view name, const std::vector<std::string>& candidates,
                                       std::size_t limit = 3);

// ` (did you mean "build"?)` (or `"a" or "b"`) for the closest candidates, "" when none is close: for
// a message, right after the name it corrects.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace qk
