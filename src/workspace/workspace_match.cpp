// Glob matching for the configuration model (see workspace_match.hpp).
#include "workspace_match.hpp"

#include <map>
#include <optional>
#include <string>

#include "qk/workspace/glob.hpp"

namespace qk::workspace::detail {

bool is_glob_pattern(std::string_view s)
{
    return s.find_first_of("*|{}()[") != std::string_view::npos;
}

bool glob_matches(std::string_view pattern, std::string_view text)
{
    // A workspace has few distinct patterns (targetDefaults keys, workspace globs) matched against
    // many names: compile each once.
    thread_local std::map<std::string, std::optional<Glob>, std::less<>> cache;
    auto it = cache.find(pattern);
    if (it == cache.end()) {
        auto g = Glob::compile(pattern);
        it = cache.emplace(std::string(pattern), g ? std::optional<Glob>(std::move(*g)) : std::nullopt).first;
    }
    return it->second && it->second->matches(text);
}

}  // namespace qk::workspace::detail
