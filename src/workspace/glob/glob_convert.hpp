// From a pattern to its compiled alternatives: parse, expand braces that hold '/', split into components and
// apply Nx's extglob rewrite (convert_glob), then build a matcher per alternative.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "glob_match.hpp"
#include "qk/util/result.hpp"

namespace qk::workspace::glob_detail {

struct Compiled {
    std::string pattern;
    bool negated = false;
    bool literal = false;
    bool names_path = false;  // a plain path, not negated (Glob::names_path)
    std::string prefix;
    std::vector<Alternative> alternatives;  // positive and negative
};

// `fileset`: a pattern with no syntax names that path or everything under it (Nx's path_or_everything_under).
Result<std::shared_ptr<const Compiled>> compile_glob(std::string_view pattern, bool fileset);

// The common leading components of two '/'-joined prefixes.
std::string common_prefix(std::string_view a, std::string_view b);

}  // namespace qk::workspace::glob_detail
