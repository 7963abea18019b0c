#include "qk/util/link_target.hpp"

#include <vector>

namespace qk {

namespace {

std::vector<std::string_view> components(std::string_view path)
{
    std::vector<std::string_view> parts;
    while (!path.empty()) {
        const auto slash = path.find('/');
        const std::string_view part = path.substr(0, slash);
        if (!part.empty())
            parts.push_back(part);
        if (slash == std::string_view::npos)
            break;
        path.remove_prefix(slash + 1);
    }
    return parts;
}

}  // namespace

std::optional<std::string> link_destination(std::string_view link, std::string_view target)
{
    if (target.empty() || target.front() == '/' || target.find('\0') != std::string_view::npos)
        return std::nullopt;
    // The kernel resolves the target from the link's directory.
    std::vector<std::string_view> at = components(link);
    if (!at.empty())
        at.pop_back();
    bool named = false;
    for (std::string_view part : components(target)) {
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
