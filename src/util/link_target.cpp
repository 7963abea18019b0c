#include "qk/util/link_target.hpp"

#include "qk/util/path_within.hpp"

namespace qk {

std::optional<std::string> link_destination(std::string_view link, std::string_view target)
{
    if (target.empty() || target.front() == '/' || target.find('\0') != std::string_view::npos)
        return std::nullopt;
    // The kernel resolves the target from the link's directory.
    std::vector<std::string_view> at = path_components(link);
    if (!at.empty())
        at.pop_back();
    bool named = false;
    for (std::string_view part : path_components(target)) {
        if (part == ".")
            continue;
        if (part != "..") {
            at.push_back(part);
            named = true;
        } else if (named || at.empty()) {
            return std::nullopt;
        } else {
            at.pop_back();
        }
    }
    std::string out;
    for (std::string_view part : at) {
        if (!out.empty())
            out += '/';
        out += part;
    }
    return out;
}

}  // namespace qk
