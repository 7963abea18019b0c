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
    // Each group's files are sorted, and groups of different projects rarely interleave (a project's
    // files sort together): laid end to end by their first file they are most often sorted already.
    std::vector<const std::vector<std::uint32_t>*> lists;
    for (const auto& group : key->groups)
        if (group.files && !group.files->empty())
            lists.push_back(group.files.get());
    std::sort(lists.begin(), lists.end(), [](const auto* a, const auto* b) { return a->front() < b->front(); });
    for (const auto* list : lists)
        input_files.insert(input_files.end(), list->begin(), list->end());
    if (std::adjacent_find(input_files.begin(), input_files.end(), std::greater_equal<>()) != input_files.end()) {
        std::sort(input_files.begin(), input_files.end());
        input_files.erase(std::unique(input_files.begin(), input_files.end()), input_files.end());
    }

    // A file the key holds only by effect that no input selects: Landlock cannot allow a directory less
    // a file in it, so a directory holding one is held file by file.
    std::vector<std::string_view> undeclared;
    for (const auto& [path, what] : effect_files)
        if (!in_input_group(path) && !json_files.contains(path))
            undeclared.push_back(path);

    // Files sort by path, so a directory's are one range of the index: it is whole when that range lies
    // in one run of consecutive input files. An ancestor of a directory that is not whole is not whole
    // either (it holds what its descendant holds), so each input's directories are walked up to the first
    // that is not; the outermost whole one found holds the files up to its range's end, which are skipped.
    const auto& paths = files->files();
    // Whether `dir` (holding file run_first or later) is whole: its range starts and ends inside the run
    // when the files just outside the run are not beneath it; then where its range ends.
    auto whole = [&](std::string_view dir, std::size_t run_first, std::size_t run_end) -> std::size_t {
        auto beneath = [&](std::size_t f) { return dir.empty() || qk::is_under(paths[f], dir); };
        if ((run_first > 0 && beneath(run_first - 1)) || (run_end < paths.size() && beneath(run_end)) ||
            files->holds_special(dir) ||
            std::any_of(undeclared.begin(), undeclared.end(), [&](std::string_view e) { return qk::is_under(e, dir); }))
            return 0;
        return files->range_under(dir).second;
    };
    for (std::size_t k = 0; k < input_files.size();) {
        std::size_t run_first = input_files[k], n = 1;
        while (k + n < input_files.size() && input_files[k + n] == run_first + n)
            ++n;
        const std::size_t run_end = run_first + n;
        std::string_view not_whole;  // a directory found not whole: the files beside it need not ask again
        for (std::size_t f = run_first; f < run_end;) {
            std::string_view dir = dirname_of(paths[f]);
            std::string_view outermost;
            std::size_t skip_to = 0;
            if (!(dir == not_whole && !not_whole.empty()))
                for (;; dir = dirname_of(dir)) {
                    std::size_t end = whole(dir, run_first, run_end);
                    if (!end) {
                        not_whole = dir;
                        break;
                    }
                    outermost = dir, skip_to = end;
                    if (dir.empty())
                        break;
                }
            if (skip_to) {
                whole_input_dirs.emplace(outermost);
                f = skip_to;
            } else {
                ++f;
            }
        }
        k += n;
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

bool Rules::declared_unkeyed(std::string_view path) const
{
    auto rel = relative(path);
    if (!rel || rel->empty() || read_relative(*rel).why != PathClass::input)
        return false;
    const Data& d = *d_;
    return d.files && !d.files->find(*rel) && !d.under_linked_dir(*rel);
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
