#include "qk/util/special_names.hpp"

namespace qk {

bool equals_ignoring_case(std::string_view a, std::string_view b)
{
    if (a.size() != b.size())
        return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z')
            x = static_cast<char>(x + 32);
        if (y >= 'A' && y <= 'Z')
            y = static_cast<char>(y + 32);
        if (x != y)
            return false;
    }
    return true;
}

SpecialDir special_dir(std::string_view name)
{
    // Lengths first: most names are none of these, and this runs for every directory entry walked.
    switch (name.size()) {
    case 3: return equals_ignoring_case(name, ".qk") ? SpecialDir::qk : SpecialDir::none;
    case 4: return equals_ignoring_case(name, ".git") ? SpecialDir::git : SpecialDir::none;
    case 12: return equals_ignoring_case(name, "node_modules") ? SpecialDir::node_modules : SpecialDir::none;
    default: return SpecialDir::none;
    }
}

SpecialDir special_tree(std::string_view path)
{
    SpecialDir found = SpecialDir::none;
    for (std::size_t start = 0; start <= path.size();) {
        std::size_t slash = path.find('/', start);
        std::size_t end = slash == std::string_view::npos ? path.size() : slash;
        switch (special_dir(path.substr(start, end - start))) {
        case SpecialDir::git: return SpecialDir::git;
        case SpecialDir::node_modules: found = SpecialDir::node_modules; break;
        case SpecialDir::qk:
            if (start == 0)
                return SpecialDir::qk;  // everything under qk's state is qk's, whatever it holds
            break;
        case SpecialDir::none: break;
        }
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return found;
}

}  // namespace qk
