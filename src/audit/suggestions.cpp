#include "qk/audit/suggestions.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace qk::audit {
namespace {

bool under(const std::string& path, const std::string& dir)
{
    return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/';
}

// The topmost directory the task created that holds `path` (or is it), if any.
const std::string* created_holder(const TaskFindings& f, const std::string& path)
{
    const std::string* best = nullptr;
    for (const std::string& d : f.created_directories)
        if ((path == d || under(path, d)) && (!best || d.size() < best->size()))
            best = &d;
    return best;
}

// A workspace-relative path as a target writes it: under its project's root with {projectRoot}.
std::string token_path(const std::string& path, const std::string& project_root)
{
    if (project_root == ".")
        return "{projectRoot}/" + path;  // the root project: the whole workspace is its own
    if (!project_root.empty() && under(path, project_root))
        return "{projectRoot}/" + path.substr(project_root.size() + 1);
    return "{workspaceRoot}/" + path;
}

void sort_unique(std::vector<std::string>& v)
{
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
}

void add(std::vector<Suggestion>& out, const char* finding, const char* declare, std::vector<std::string> values,
         bool ignorable = false)
{
    if (values.empty())
        return;
    sort_unique(values);
    std::vector<std::string> or_ignore = ignorable ? values : std::vector<std::string>{};
    std::size_t paths = values.size();
    out.push_back({finding, declare, std::move(values), std::move(or_ignore), paths});
}

// Files read in the projects it depends on: keyed by a `^` input (default is every file of a project),
// or left out by `^` ignoreReads globs matched from each of their roots, by top-level entry.
void dependency_suggestion(std::vector<Suggestion>& out, const TaskAudit& t)
{
    std::vector<std::string> globs;
    std::size_t files = 0;
    for (const auto& [project, paths] : t.findings.dependency_reads) {
        files += paths.size();
        auto root = t.dependency_roots.find(project);
        for (const std::string& p : paths) {
            std::string rel = p;
            if (root != t.dependency_roots.end() && root->second != "." && under(p, root->second))
                rel = p.substr(root->second.size() + 1);
            auto slash = rel.find('/');
            globs.push_back("^" + (slash == std::string::npos ? rel : rel.substr(0, slash) + "/**"));
        }
    }
    if (globs.empty())
        return;
    sort_unique(globs);
    out.push_back({"dependencyReads", "inputs", {"^default"}, std::move(globs), files});
}

std::string quoted_list(const std::vector<std::string>& values, std::size_t shown)
{
    std::string out = "[";
    for (std::size_t i = 0; i < values.size() && i < shown; ++i)
        out += fmt::format("{}\"{}\"", i ? ", " : "", values[i]);
    if (values.size() > shown)
        out += fmt::format(", … {} more", values.size() - shown);
    return out + "]";
}

}  // namespace

std::vector<std::string> group_created(const TaskFindings& f)
{
    std::vector<std::string> out;
    for (const std::string& p : f.stray_writes) {
        const std::string* d = created_holder(f, p);
        out.push_back(d ? *d + "/" : p);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

std::vector<Suggestion> suggest(const TaskAudit& t)
{
    const TaskFindings& f = t.findings;
    const std::string& project_root = t.project_root;
    std::vector<Suggestion> out;
    std::vector<std::string> inputs;
    for (const std::string& p : f.reads_outside_inputs)
        inputs.push_back(token_path(p, project_root));
    add(out, "readsOutsideInputs", "inputs", std::move(inputs), true);
    std::vector<std::string> tsconfig;
    for (const std::string& p : f.tsconfig_reads)
        tsconfig.push_back(token_path(p, project_root));
    add(out, "tsconfigReads", "inputs", std::move(tsconfig), true);
    std::vector<std::string> outputs;
    for (const std::string& p : f.stray_writes) {
        const std::string* d = created_holder(f, p);
        outputs.push_back(token_path(d ? *d : p, project_root));
    }
    add(out, "strayWrites", "outputs", std::move(outputs));
    dependency_suggestion(out, t);
    add(out, "unkeyedPackages", "externalDependencies", f.unkeyed_packages);
    add(out, "hoistedPackages", "packageExtensions", f.hoisted_packages);
    return out;
}

std::string suggestion_line(const Suggestion& s, std::size_t shown)
{
    std::string out;
    if (s.declare == "externalDependencies")
        out = fmt::format("\"inputs\": [{{\"externalDependencies\": {}}}]", quoted_list(s.values, shown));
    else if (s.declare == "packageExtensions")
        out = fmt::format("pnpm's \"packageExtensions\": {} as a dependency of the package importing it",
                          quoted_list(s.values, shown));
    else
        out = fmt::format("\"{}\": {}", s.declare, quoted_list(s.values, shown));
    const char* it = std::max(s.paths, s.or_ignore.size()) == 1 ? "it" : "they";
    if (s.or_ignore == s.values)
        out += fmt::format(", or in qk:ultracache.ignoreReads if {} cannot change the result", it);
    else if (!s.or_ignore.empty())
        out += fmt::format(", or {} in qk:ultracache.ignoreReads if {} cannot change the result",
                           quoted_list(s.or_ignore, shown), it);
    return out;
}

}  // namespace qk::audit
