// Workspace::match_projects: Nx's findMatchingProjects (nx/src/utils/find-matching-projects.ts).
// Patterns apply in order, each adding or (with "!") removing projects; a leading exclusion starts from
// every project. "tag:", "name:" and "directory:" labels pick what a pattern matches; an unlabeled
// pattern is an exact name, else (not a glob) a word inside names as Nx's regex finds it, else a glob
// over names, and when that matches nothing a glob over project roots. Globs match with dot:true.
#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

#include "qk/workspace/workspace.hpp"
#include "workspace_match.hpp"

namespace qk::workspace {

namespace {

using detail::is_glob_pattern;

bool glob_or_equal(const std::string& pattern, const std::string& item)
{
    return item == pattern || detail::glob_matches(pattern, item);
}

bool word_char(char c)
{
    return std::isalnum(static_cast<unsigned char>(c)) || c == '@' || c == '-';
}

// (?<![@a-zA-Z0-9-])<word>(?![@a-zA-Z0-9-]), case-insensitive.
bool contains_word(const std::string& name, const std::string& word)
{
    if (word.empty() || word.size() > name.size())
        return false;
    auto lower = [](std::string s) {
        std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
        return s;
    };
    std::string n = lower(name), w = lower(word);
    for (std::size_t at = n.find(w); at != std::string::npos; at = n.find(w, at + 1)) {
        bool before_ok = at == 0 || !word_char(n[at - 1]);
        std::size_t end = at + w.size();
        bool after_ok = end == n.size() || !word_char(n[end]);
        if (before_ok && after_ok)
            return true;
    }
    return false;
}

}  // namespace

Result<std::vector<std::size_t>> Workspace::match_projects(std::span<const std::string> patterns_in) const
{
    std::vector<std::string> patterns(patterns_in.begin(), patterns_in.end());
    std::set<std::size_t> matched;
    if (patterns.empty())
        return std::vector<std::size_t>{};
    if (!patterns.front().empty() && patterns.front()[0] == '!')
        patterns.insert(patterns.begin(), "*");
    const std::size_t n = projects_.size();
    for (const auto& text : patterns) {
        if (text.empty())
            continue;
        bool exclude = text[0] == '!';
        std::string value = exclude ? text.substr(1) : text;
        std::string type = "unlabeled";
        if (!find_project(value)) {
            auto colon = value.find(':');
            if (colon != std::string::npos) {
                std::string label = value.substr(0, colon);
                if (label == "tag" || label == "name" || label == "directory" || label == "unlabeled") {
                    type = label;
                    value = value.substr(colon + 1);
                }
            }
        } else {
            type = "name";
        }
        auto apply = [&](std::size_t i) {
            if (exclude)
                matched.erase(i);
            else
                matched.insert(i);
        };
        std::size_t before = matched.size();
        auto changed = [&] { return matched.size() != before; };
        if (value == "*") {
            for (std::size_t i = 0; i < n; ++i)
                apply(i);
            continue;
        }
        auto by_name = [&] {
            if (auto i = project_index(value)) {
                apply(*i);
                return;
            }
            bool glob = is_glob_pattern(value);
            for (std::size_t i = 0; i < n; ++i)
                if (glob ? glob_or_equal(value, projects_[i].name) : contains_word(projects_[i].name, value))
                    apply(i);
        };
        auto by_directory = [&] {
            for (std::size_t i = 0; i < n; ++i)
                if (glob_or_equal(value, projects_[i].root))
                    apply(i);
        };
        if (type == "tag") {
            bool glob = is_glob_pattern(value);
            for (std::size_t i = 0; i < n; ++i) {
                const auto& tags = projects_[i].tags;
                bool hit = std::find(tags.begin(), tags.end(), value) != tags.end() ||
                           (glob && std::any_of(tags.begin(), tags.end(),
                                                [&](const std::string& t) { return glob_or_equal(value, t); }));
                if (hit)
                    apply(i);
            }
        } else if (type == "name") {
            by_name();
        } else if (type == "directory") {
            by_directory();
        } else {
            by_name();
            if (!changed())
                by_directory();
        }
    }
    return std::vector<std::size_t>(matched.begin(), matched.end());
}

}  // namespace qk::workspace
