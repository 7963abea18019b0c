// Queries of a Recording that only tests make: the product walks a recording once, in classify.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qk/record/recording.hpp"

namespace qk::test {

// The paths that have any of `access`, sorted.
inline std::vector<std::string> paths_with(const record::Recording& rec, std::uint16_t access)
{
    std::vector<std::string> out;
    for (const auto* entry : rec.sorted_paths())
        if (entry->second & access)
            out.push_back(entry->first);
    return out;
}

}  // namespace qk::test
