#include "qk/audit/suggestions.hpp"

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

void add(std::vector<Suggestion>& out, const char* finding, const char* declare, std::vector<std::string> values)
{
    if (values.empty())
        return;
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    out.push_back({finding, declare, std::move(values)});
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

std::vector<Suggestion> suggest(const TaskFindings& f, const std::string& project_root)
{
    std::vector<Suggestion> out;
    std::vector<std::string> outputs;
    for (const std::string& p : f.stray_writes) {
        const std::string* d = created_holder(f, p);
        outputs.push_back(token_path(d ? *d : p, project_root));
    }
    add(out, "strayWrites", "outputs", std::move(outputs));
    std::vector<std::string> inputs;
    for (const std::string& p : f.reads_outside_inputs)
        inputs.push_back(token_path(p, project_root));
    add(out, "readsOutsideInputs", "inputs", std::move(inputs));
    std::vector<std::string> tsconfig;
    for (const std::string& p : f.tsconfig_reads)
        tsconfig.push_back(token_path(p, project_root));
    add(out, "tsconfigReads", "inputs", std::move(tsconfig));
    add(out, "unkeyedPackages", "externalDependencies", f.unkeyed_packages);
    add(out, "hoistedPackages", "packageExtensions", f.hoisted_packages);
    return out;
}

}  // namespace qk::audit
