// qk report fix (report_fix_ignore.hpp): ignoreReads placed where the target reads it, folded as the
// summary folds sibling globs.
#include "report_fix_ignore.hpp"

#include <algorithm>

#include "qk/audit/suggestions.hpp"
#include "qk/util/special_names.hpp"
#include "report_fix_nx.hpp"

namespace qk::cli {

using workspace::Json;

bool writes_installed(std::string_view value)
{
    for (std::size_t start = 0; start < value.size();) {
        std::size_t end = value.find('/', start);
        if (end == std::string_view::npos)
            end = value.size();
        if (special_dir(value.substr(start, end - start)) == SpecialDir::node_modules)
            return true;
        start = end + 1;
    }
    return false;
}

void add_holder(std::vector<std::string>& path, std::string_view key)
{
    if (key == kIgnoreReads)
        path.emplace_back(kUltracache);
}

bool inherits_ignore(const workspace::Workspace& ws, const workspace::Target& t)
{
    const Json* entry = ws.nx().target_defaults.find(t.name);
    if (!entry)
        return !t.has_ultracache && inherits_by_name(ws, t, "inputs");
    if (t.target_default_key != t.name)
        return false;
    const Json* uc = entry->find(kUltracache);
    if (!uc || !uc->is_object())
        return !t.has_ultracache;
    std::vector<std::string> globs;
    if (const Json* list = uc->find(kIgnoreReads); list && list->is_array())
        for (const Json& item : list->as_array())
            if (item.is_string())
                globs.push_back(item.as_string());
    return t.has_ultracache && globs == t.ultracache_ignore_reads;
}

std::vector<std::string> fold_deep(const std::vector<std::string>& values)
{
    constexpr std::string_view kRoot = "{workspaceRoot}/";
    std::vector<std::string> paths, out;
    for (const std::string& v : values)
        (v.starts_with(kRoot) ? paths.push_back(v.substr(kRoot.size())) : out.push_back(v));
    std::sort(paths.begin(), paths.end());
    for (const audit::SiblingGroup& g : audit::fold_siblings_deep(paths, 2))
        out.push_back(std::string(kRoot) + g.glob);
    return out;
}

}  // namespace qk::cli
