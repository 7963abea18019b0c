// qk report fix (report_fix_globs.hpp): values matched with the workspace's own globs, never a second
// matcher, and sibling files folded only where the file index says the glob selects them and no more.
#include "report_fix_globs.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>

#include "qk/util/path_within.hpp"
#include "qk/workspace/glob.hpp"

namespace qk::cli {

namespace {

constexpr std::string_view kTokens[] = {"{projectRoot}/", "{workspaceRoot}/"};

// The token a value starts with ("{projectRoot}/" or "{workspaceRoot}/") and what follows it; nullopt
// for anything else (a named input, a "^" input, an object's text).
std::optional<std::pair<std::string_view, std::string_view>> split_token(std::string_view value)
{
    for (std::string_view token : kTokens)
        if (value.starts_with(token))
            return std::pair{token, value.substr(token.size())};
    return std::nullopt;
}

// Whether `text` is a path a glob would take as itself: no syntax, no escapes.
bool plain(std::string_view text)
{
    if (text.empty() || !is_plain_relative(text))
        return false;
    auto glob = workspace::Glob::compile(text);
    return glob && glob->is_literal() && glob->literal_prefix() == text;
}

// Whether the list's `pattern` (as written, "!" for a negation stripped) selects `value`.
bool selects(std::string_view pattern, std::string_view value)
{
    if (pattern == value)
        return true;
    auto p = split_token(pattern), v = split_token(value);
    if (!p || !v || p->first != v->first)
        return false;
    auto glob = workspace::Glob::compile_fileset(p->second);
    return glob && glob->matches(v->second);
}

// A plain path split at its last '/': ("config", "a.json"); ("", "a.json") directly in the root.
std::pair<std::string_view, std::string_view> dir_and_name(std::string_view rest)
{
    const std::size_t slash = rest.rfind('/');
    if (slash == std::string_view::npos)
        return {{}, rest};
    return {rest.substr(0, slash), rest.substr(slash + 1)};
}

// "json" for "a.json"; "" for a name without one (a dotfile's leading dot is no extension).
std::string_view extension(std::string_view name)
{
    const std::size_t dot = name.rfind('.');
    return dot == std::string_view::npos || dot == 0 || dot + 1 == name.size() ? std::string_view{}
                                                                               : name.substr(dot + 1);
}

// The names of the files the index lists directly in `dir` ("" for the workspace root).
std::set<std::string_view> files_in(const key::FileIndex& index, std::string_view dir)
{
    std::set<std::string_view> out;
    auto [first, last] = index.range_under(dir);
    for (std::size_t i = first; i < last; ++i) {
        std::string_view rest = index.files()[i];
        if (!dir.empty()) {
            if (rest.size() <= dir.size())
                continue;  // the directory's own name, were it a file
            rest.remove_prefix(dir.size() + 1);
        }
        if (rest.find('/') == std::string_view::npos)
            out.insert(rest);
    }
    return out;
}

std::string join(std::string_view root, std::string_view dir)
{
    if (root.empty() || root == ".")
        return std::string(dir);
    return dir.empty() ? std::string(root) : std::string(root) + "/" + std::string(dir);
}

// One directory's plain values: their names, and where each stands in the list.
struct Group {
    std::string_view token, dir;
    std::vector<std::size_t> members;
};

// Whether `names` are exactly the files (those with extension `ext`, when given) the index lists in the
// group's directory, wherever the token places it.
bool exact(const key::FileIndex& index, const Group& g, std::span<const std::string> roots,
           const std::set<std::string_view>& names, std::string_view ext)
{
    std::vector<std::string> dirs;
    if (g.token == kTokens[0])
        for (const std::string& root : roots)
            dirs.push_back(join(root, g.dir));
    else
        dirs.emplace_back(g.dir);
    if (dirs.empty())
        return false;
    for (const std::string& dir : dirs) {
        std::set<std::string_view> there = files_in(index, dir);
        if (!ext.empty())
            std::erase_if(there, [&](std::string_view name) { return extension(name) != ext; });
        if (there != names)
            return false;
    }
    return true;
}

}  // namespace

bool list_covers(const workspace::Json* list, std::string_view value)
{
    if (!list || !list->is_array())
        return false;
    bool selected = false;
    for (const workspace::Json& item : list->as_array()) {
        if (!item.is_string())
            continue;
        std::string_view entry = item.as_string();
        const bool negated = entry.starts_with('!');
        if (!selects(negated ? entry.substr(1) : entry, value))
            continue;
        if (negated)
            return false;
        selected = true;
    }
    return selected;
}

IndexSource scan_when_asked(const workspace::Workspace& ws)
{
    auto scanned = std::make_shared<std::optional<Result<key::FileIndex>>>();
    return [&ws, scanned]() -> const key::FileIndex* {
        if (!*scanned)
            *scanned = key::FileIndex::scan(ws);
        return **scanned ? &***scanned : nullptr;
    };
}

std::vector<std::string> fold_into_globs(const std::vector<std::string>& values, std::span<const std::string> roots,
                                         const IndexSource& index)
{
    std::vector<Group> groups;
    std::map<std::pair<std::string_view, std::string_view>, std::size_t> group_of;
    for (std::size_t i = 0; i < values.size(); ++i) {
        auto split = split_token(values[i]);
        if (!split || !plain(split->second))
            continue;
        const std::string_view dir = dir_and_name(split->second).first;
        auto [it, added] = group_of.try_emplace({split->first, dir}, groups.size());
        if (added)
            groups.push_back({split->first, dir, {}});
        groups[it->second].members.push_back(i);
    }
    // The glob standing for each value folded, at the first of its group; the others are dropped.
    std::map<std::size_t, std::string> glob_at;
    std::set<std::size_t> folded;
    const key::FileIndex* files = nullptr;
    for (const Group& g : groups) {
        if (g.members.size() < kGlobFiles)
            continue;
        if (!files && !(files = index()))
            return values;
        auto name_of = [&](std::size_t i) { return dir_and_name(split_token(values[i])->second).second; };
        const std::string prefix = std::string(g.token) + (g.dir.empty() ? "" : std::string(g.dir) + "/");
        std::set<std::string_view> names;
        for (std::size_t i : g.members)
            names.insert(name_of(i));
        if (exact(*files, g, roots, names, {})) {
            glob_at[g.members.front()] = prefix + "*";
            folded.insert(g.members.begin(), g.members.end());
            continue;
        }
        std::map<std::string_view, std::vector<std::size_t>> by_extension;
        for (std::size_t i : g.members)
            if (std::string_view ext = extension(name_of(i)); !ext.empty() && plain("x." + std::string(ext)))
                by_extension[ext].push_back(i);
        for (const auto& [ext, members] : by_extension) {
            std::set<std::string_view> with_ext;
            for (std::size_t i : members)
                with_ext.insert(name_of(i));
            if (members.size() < kGlobFiles || !exact(*files, g, roots, with_ext, ext))
                continue;
            glob_at[members.front()] = prefix + "*." + std::string(ext);
            folded.insert(members.begin(), members.end());
        }
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (auto it = glob_at.find(i); it != glob_at.end())
            out.push_back(it->second);
        else if (!folded.contains(i))
            out.push_back(values[i]);
    }
    return out;
}

}  // namespace qk::cli
