#include "affected.hpp"

#include <algorithm>
#include <deque>
#include <set>

#include <fmt/format.h>

#include "qk/key/inputs.hpp"
#include "qk/util/git.hpp"

namespace qk::cli {
namespace {

void add_lines(const std::string& text, std::set<std::string>& out)
{
    std::size_t start = 0;
    for (std::size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1)
        if (nl > start)
            out.emplace(text, start, nl - start);
    if (start < text.size())
        out.emplace(text.substr(start));
}

}  // namespace

Result<std::vector<std::string>> changed_files(const std::filesystem::path& root, const std::string& base,
                                               const std::optional<std::string>& head)
{
    QK_TRY(merge_base, git(root, {"merge-base", base, head.value_or("HEAD")}));
    std::string from = merge_base->substr(0, merge_base->find('\n'));
    std::set<std::string> files;
    // --relative: paths from the workspace root, which may lie below the repository's.
    std::vector<std::string> diff = {"diff", "--name-only", "--no-renames", "--relative", from};
    if (head)
        diff.push_back(*head);
    QK_TRY(changed, git(root, diff));
    add_lines(*changed, files);
    if (!head) {
        QK_TRY(untracked, git(root, {"ls-files", "--others", "--exclude-standard"}));
        add_lines(*untracked, files);
    }
    return std::vector<std::string>(files.begin(), files.end());
}

Result<std::string> affected_base(const std::filesystem::path& root, const std::string& given,
                                  const std::string& default_base)
{
    if (!given.empty())
        return given;
    std::string base = default_base.empty() ? "main" : default_base;
    QK_TRY_STATUS(git(root, {"rev-parse", "--is-inside-work-tree"}));  // not a repository: git's own words
    if (git(root, {"rev-parse", "--verify", "--quiet", base + "^{commit}"}))
        return base;
    return error(fmt::format("qk affected: no --base was given, and {} \"{}\" names no branch or commit in this "
                             "repository (`git rev-parse --verify {}^{{commit}}` found none); pass the branch or "
                             "commit to compare against with --base (for example --base origin/main), or set "
                             "nx.json's defaultBase",
                             default_base.empty() ? "the default base" : "nx.json's defaultBase", base, base));
}

namespace {

// Nx's implicit locator (affected/locators/workspace-projects.ts getImplicitlyTouchedProjects): a
// task's {workspaceRoot} filesets are matched against every changed file, whichever project owns it,
// so a root project with `{workspaceRoot}/**/*` among its inputs is touched by a change anywhere.
Status touch_by_workspace_inputs(key::Session& s, const std::vector<std::string>& changed,
                                 std::set<std::size_t>& touched)
{
    const auto& tasks = s.tasks().tasks();
    key::InputCache cache;
    for (const auto& task : tasks) {
        if (touched.contains(task.project))
            continue;
        QK_TRY(plan, key::plan_inputs(s.graph(), task.project, *task.target, &cache, key::Expansion::own));
        for (const auto& group : plan->filesets) {
            if (group->project || group->patterns.empty())
                continue;  // a project's own files: the changed file's owner says
            if (std::any_of(changed.begin(), changed.end(),
                            [&](const std::string& f) { return group->globs.matches(f); })) {
                touched.insert(task.project);
                break;
            }
        }
    }
    return {};
}

}  // namespace

Result<std::vector<std::string>> affected_projects(key::Session& s, const std::vector<std::string>& changed)
{
    const auto& ws = s.workspace();
    std::set<std::size_t> touched;
    std::set<std::string, std::less<>> outside;  // changed files in no project
    for (const std::string& f : changed) {
        if (const workspace::Project* p = ws.project_owning(f); p && !p->root.empty() && p->root != ".")
            touched.insert(*ws.project_index(p->name));
        else
            outside.insert(f);
    }
    QK_TRY_STATUS(touch_by_workspace_inputs(s, changed, touched));
    if (!outside.empty()) {
        const auto& tasks = s.tasks().tasks();
        const auto& names = s.files().files();
        for (std::size_t i = 0; i < tasks.size(); ++i) {
            QK_TRY(computed, s.keys().key(i));
            QK_TRY(expanded, s.keys().expanded(i));  // its dependencies' files through `^` inputs too
            const key::TaskKey& key = *expanded;
            auto keyed = [&](std::string_view path) { return outside.find(path) != outside.end(); };
            bool hit = keyed(key.packages.lockfile);
            for (const key::KeyGroup& g : key.groups)
                for (std::uint32_t f : *g.files)
                    hit = hit || keyed(names[f]);
            for (const key::KeyFile& f : key.always)
                hit = hit || keyed(f.path);
            for (const key::KeyEffectFile& f : key.effect_files)
                hit = hit || keyed(f.path);
            for (const key::KeyJsonFile& f : key.json_files)
                hit = hit || keyed(f.path);
            if (hit)
                touched.insert(tasks[i].project);
        }
    }
    // With every project that depends on a touched one, directly or not.
    std::deque<std::size_t> queue(touched.begin(), touched.end());
    while (!queue.empty()) {
        std::size_t p = queue.front();
        queue.pop_front();
        for (std::size_t d : s.graph().dependents(p))
            if (touched.insert(d).second)
                queue.push_back(d);
    }
    std::vector<std::string> out;
    for (std::size_t p : touched)
        out.push_back(ws.projects()[p].name);
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace qk::cli
