// Which inputs Landlock can hold by directory: "A directory whose every tracked file is an input is
// allowed whole, so untracked files in it can be read too, unless it holds one of the configuration
// files ... that the task does not declare" (and never one holding .git, .qk or node_modules). The audit
// allows reads under those directories as enforce does, so the two never disagree.

#include <algorithm>
#include <optional>

#include "path_kinds.hpp"
#include "qk/util/path_within.hpp"
#include "rules_data.hpp"

namespace qk::rules {

bool Rules::Data::under_linked_dir(std::string_view rel) const
{
    if (linked_files.contains(rel))
        return true;
    if (linked_dirs.empty())
        return false;
    for (std::string_view dir = rel;; dir = dirname_of(dir)) {
        if (linked_dirs.contains(dir))
            return true;
        if (dir.empty())
            return false;
    }
}

void Rules::Data::cover_inputs()
{
    auto inside = [&](const std::string& abs) -> std::optional<std::string> {
        if (abs == root)
            return std::string();
        if (auto rel = qk::relative_under(abs, root))
            return std::string(*rel);
        return std::nullopt;
    };
    for (const auto& tree : key->linked_trees) {
        for (const std::string& dir : tree->targets)
            if (auto rel = inside(dir))
                linked_dirs.insert(*rel);
        for (const std::string& file : tree->target_files)
            if (auto rel = inside(file))
                linked_files.insert(*rel);
    }
    for (const auto& group : key->groups)
        for (const auto& glob : key->inputs.filesets.at(group.fileset)->globs.globs())
            if (glob.names_path() && !glob.literal_prefix().empty())
                literal_inputs.emplace(glob.literal_prefix());
    if (!files)
        return;
    for (const auto& group : key->groups)
        if (group.files)
            input_files.insert(input_files.end(), group.files->begin(), group.files->end());
    std::sort(input_files.begin(), input_files.end());
    input_files.erase(std::unique(input_files.begin(), input_files.end()), input_files.end());

    // A file the key holds only by effect that no input selects: Landlock cannot allow a directory less
    // a file in it, so a directory holding one is held file by file.
    std::vector<std::string_view> undeclared;
    for (const auto& [path, what] : effect_files)
        if (!in_input_group(path) && !json_files.contains(path))
            undeclared.push_back(path);

    StringMap<std::size_t> inputs_under;
    for (std::uint32_t f : input_files)
        for (std::string_view dir = dirname_of(files->files()[f]);; dir = dirname_of(dir)) {
            ++inputs_under[std::string(dir)];
            if (dir.empty())
                break;
        }
    auto whole = [&](std::string_view dir, std::size_t inputs) {
        auto [first, last] = files->range_under(dir);
        if (inputs != last - first || files->holds_special(dir))
            return false;
        return std::none_of(undeclared.begin(), undeclared.end(),
                            [&](std::string_view e) { return qk::is_under(e, dir); });
    };
    PathSet candidates;
    for (const auto& [dir, n] : inputs_under)
        if (whole(dir, n))
            candidates.insert(dir);
    // Only the outermost: a directory inside a whole one is held by it.
    for (const std::string& dir : candidates) {
        bool inside = false;
        for (std::string_view up = dir; !up.empty() && !inside;) {
            up = dirname_of(up);
            inside = candidates.contains(up);
        }
        if (!inside)
            whole_input_dirs.insert(dir);
    }
}

bool Rules::Data::named_input(std::string_view rel) const
{
    if (literal_inputs.empty())
        return false;
    if (literal_inputs.contains(rel))
        return true;
    // Under a directory an input names that the file index did not see (made since the run started,
    // as a dependency's generated code): allowed whole, as enforce allows it.
    for (std::string_view dir = dirname_of(rel); !dir.empty(); dir = dirname_of(dir))
        if (literal_inputs.contains(dir)) {
            auto [first, last] = files ? files->range_under(dir) : std::pair<std::size_t, std::size_t>{0, 0};
            return first == last;
        }
    return false;
}

bool Rules::Data::under_whole_input_dir(std::string_view rel) const
{
    if (whole_input_dirs.empty())
        return false;
    for (std::string_view dir = dirname_of(rel);; dir = dirname_of(dir)) {
        if (whole_input_dirs.contains(dir))
            return true;
        if (dir.empty())
            return false;
    }
}

}  // namespace qk::rules
