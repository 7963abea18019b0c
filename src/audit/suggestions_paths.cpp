// What suggestions know of paths by their names alone: names made for one run, files the key holds
// only by effect, and sibling files folded into a glob. Names, not rules: a merged report has no rules,
// and a read's finding kind does not say which of these it is.
#include "qk/audit/suggestions.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>

#include "qk/util/path_within.hpp"

namespace qk::audit {
namespace {

std::string_view basename_of(std::string_view path)
{
    auto slash = path.rfind('/');
    return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// A token of a name that no person chose: a millisecond or second clock (10 digits and more), or a
// hash or random run (8 hex digits and more, with both digits and letters: "deadbeef" or "20240101"
// alone are words and dates someone may keep).
bool random_token(std::string_view t)
{
    if (t.size() >= 10 && std::all_of(t.begin(), t.end(), is_digit))
        return true;
    return t.size() >= 8 && std::all_of(t.begin(), t.end(), is_hex) && std::any_of(t.begin(), t.end(), is_digit) &&
           !std::all_of(t.begin(), t.end(), is_digit);
}

// 8-4-4-4-12 hex digits with dashes, anywhere in `s`.
bool holds_uuid(std::string_view s)
{
    static constexpr std::string_view kShape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    for (std::size_t i = 0; i + kShape.size() <= s.size(); ++i) {
        bool match = true;
        for (std::size_t k = 0; k < kShape.size() && match; ++k)
            match = kShape[k] == '-' ? s[i + k] == '-' : is_hex(s[i + k]);
        if (match)
            return true;
    }
    return false;
}

bool temporary_segment(std::string_view seg)
{
    // vite: vite.config.ts.timestamp-1796405520738-3f2a1b.mjs (a clock, then a short random part).
    if (auto at = seg.find("timestamp-");
        at != std::string_view::npos && at + 10 < seg.size() && is_digit(seg[at + 10]))
        return true;
    if (holds_uuid(seg))
        return true;
    std::vector<std::string_view> tokens;
    for (std::size_t start = 0; start <= seg.size();) {
        std::size_t end = seg.find_first_of(".-_~+", start);
        if (end == std::string_view::npos)
            end = seg.size();
        tokens.push_back(seg.substr(start, end - start));
        start = end + 1;
    }
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        if (random_token(tokens[i]))
            return true;
        // write-file-atomic and friends: package.json.tmp-1a2b3c, out.tmp.4f2e (a short random suffix).
        const bool tmp = tokens[i].size() == 3 && std::tolower(static_cast<unsigned char>(tokens[i][0])) == 't' &&
                         std::tolower(static_cast<unsigned char>(tokens[i][1])) == 'm' &&
                         std::tolower(static_cast<unsigned char>(tokens[i][2])) == 'p';
        if (tmp && i + 1 < tokens.size() && tokens[i + 1].size() >= 4 &&
            std::all_of(tokens[i + 1].begin(), tokens[i + 1].end(), is_hex))
            return true;
    }
    return false;
}

// "packages/*/tsconfig.json" as what lies before and after its star; the star segment's index.
struct Split {
    std::string_view before, after;  // before ends in '/' unless empty; after starts with '/'
};

std::optional<Split> split_glob(std::string_view glob)
{
    std::size_t star = glob.starts_with("*/") ? 0 : glob.find("/*/");
    if (star == std::string_view::npos)
        return std::nullopt;
    if (star == 0 && glob.starts_with("*/"))
        return Split{{}, glob.substr(1)};
    return Split{glob.substr(0, star + 1), glob.substr(star + 2)};
}

}  // namespace

bool temporary_name(std::string_view path)
{
    for (std::size_t start = 0; start < path.size();) {
        std::size_t end = path.find('/', start);
        if (end == std::string_view::npos)
            end = path.size();
        if (temporary_segment(path.substr(start, end - start)))
            return true;
        start = end + 1;
    }
    return false;
}

bool held_by_effect(std::string_view path, std::string_view project_root)
{
    static constexpr std::string_view kRoot[] = {"nx.json", "nx.local.json", "pnpm-workspace.yaml", "pnpm-lock.yaml"};
    if (std::find(std::begin(kRoot), std::end(kRoot), path) != std::end(kRoot))
        return true;
    if (path == "package.json")
        return project_root != ".";  // the root project's own manifest is keyed whole
    if (project_root.empty() || project_root == ".")
        return path == "project.json" || path == "project.local.json";
    auto rest = relative_under(path, project_root);
    return rest && (*rest == "project.json" || *rest == "project.local.json");
}

bool sibling_match(std::string_view glob, std::string_view path)
{
    // Segment by segment: a "*" stands for any one non-empty segment, anything else for itself.
    while (true) {
        const std::size_t g = glob.find('/'), p = path.find('/');
        const std::string_view gs = glob.substr(0, g), ps = path.substr(0, p);
        if (ps.empty() || (gs != "*" && gs != ps))
            return false;
        if (g == std::string_view::npos || p == std::string_view::npos)
            return g == p;
        glob.remove_prefix(g + 1);
        path.remove_prefix(p + 1);
    }
}

std::vector<SiblingGroup> fold_siblings(const std::vector<std::string>& paths, std::size_t at_least)
{
    // Each path is a candidate of every glob that stars one of its directories (never its name: files
    // beside each other stay themselves). The globs that gather most are taken first.
    std::map<std::string, std::vector<const std::string*>> candidates;
    for (const std::string& p : paths) {
        std::size_t start = 0;
        for (std::size_t slash = p.find('/'); slash != std::string::npos; slash = p.find('/', start)) {
            if (p.compare(start, slash - start, "*") != 0)  // a glob's star is starred already
                candidates[p.substr(0, start) + "*" + p.substr(slash)].push_back(&p);
            start = slash + 1;
        }
    }
    std::vector<std::pair<std::size_t, const std::string*>> order;
    for (const auto& [glob, members] : candidates)
        if (members.size() >= at_least)
            order.emplace_back(members.size(), &glob);
    std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
        return a.first != b.first ? a.first > b.first : *a.second < *b.second;
    });
    std::set<const std::string*> taken;
    std::vector<SiblingGroup> out;
    for (const auto& [size, glob] : order) {
        SiblingGroup g{*glob, {}};
        for (const std::string* p : candidates[*glob])
            if (!taken.contains(p))
                g.files.push_back(*p);
        if (g.files.size() < at_least)
            continue;
        for (const std::string* p : candidates[*glob])
            taken.insert(p);
        out.push_back(std::move(g));
    }
    for (const std::string& p : paths)
        if (!taken.contains(&p))
            out.push_back({p, {p}});
    std::sort(out.begin(), out.end(), [](const SiblingGroup& a, const SiblingGroup& b) { return a.glob < b.glob; });
    return out;
}

std::vector<SiblingGroup> fold_siblings_deep(const std::vector<std::string>& paths, std::size_t at_least)
{
    std::vector<SiblingGroup> groups = fold_siblings(paths, at_least);
    while (true) {
        std::vector<std::string> globs;
        std::map<std::string, const SiblingGroup*> by_glob;
        for (const SiblingGroup& g : groups) {
            globs.push_back(g.glob);
            by_glob[g.glob] = &g;
        }
        std::vector<SiblingGroup> folded;
        for (const SiblingGroup& over : fold_siblings(globs, 2)) {
            SiblingGroup merged{over.glob, {}};
            for (const std::string& glob : over.files) {
                const auto& files = by_glob.at(glob)->files;
                merged.files.insert(merged.files.end(), files.begin(), files.end());
            }
            std::sort(merged.files.begin(), merged.files.end());
            folded.push_back(std::move(merged));
        }
        if (folded.size() == groups.size())
            return folded;
        groups = std::move(folded);
    }
}

std::string prefer_ignore_for(std::string_view glob)
{
    if (!split_glob(glob))
        return {};
    std::string_view name = basename_of(glob);
    if (name == "package.json")
        return "package managers read the package.json of every workspace package to list the workspace, as "
               "pnpm run does";
    const bool config = (name.starts_with("tsconfig") || name.starts_with("jsconfig")) && name.ends_with(".json");
    if (!config)
        return {};
    return fmt::format("one tool reads the {} of every directory there, likely only to find paths (as "
                       "vite-tsconfig-paths does)",
                       name);
}

}  // namespace qk::audit
