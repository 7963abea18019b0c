// Glob text for compiled nodes (see glob_print.cpp).
#pragma once

#include <string>

#include "glob_match.hpp"

namespace qk::workspace::glob_detail {

// Appends `nodes` as glob text; `depth` > 0 inside a group, where ',' and '|' need escaping.
void print_nodes(std::string& out, const Nodes& nodes, int depth = 0);

}  // namespace qk::workspace::glob_detail
