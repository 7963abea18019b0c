// Judging one access. The order matters where classes overlap: what qk and the sandbox keep open
// (.qk, .git, node_modules, scratch) first, then what the task declares (outputs, warm paths, inputs,
// the key's other files, dependencies' outputs, ignored reads), then what a finding is.

#include <algorithm>

#include "qk/util/path_within.hpp"
#include "qk/util/special_names.hpp"
#include "path_kinds.hpp"
#include "qk/rules/held_paths.hpp"
#include "rules_data.hpp"

namespace qk::rules {

const char* class_name(PathClass c)
{
    switch (c) {
    case PathClass::outside: return "outside the workspace";
    case PathClass::qk_state: return "qk's state";
    case PathClass::node_modules: return "node_modules";
    case PathClass::installed_files: return "installed package (read-only)";
    case PathClass::scratch: return "scratch directory";
    case PathClass::output: return "output";
    case PathClass::output_directory: return "directory of an output";
    case PathClass::warm: return "warm path";
    case PathClass::input: return "input";
    case PathClass::always: return "held whole by every key";
    case PathClass::json_input: return "json input";
    case PathClass::dependency_output: return "a dependency's output";
    case PathClass::covered_manifest: return "manifest of a covered nested workspace or what it links to";
    case PathClass::ignored_read: return "ignored read";
    case PathClass::git: return ".git";
    case PathClass::git_machinery: return "git's configuration or hooks (read-only)";
    case PathClass::dotenv: return "dotenv file";
    case PathClass::effect_file: return "held only by effect";
    case PathClass::manifest: return "workspace package's package.json";
    case PathClass::toolchain: return "version or package manager configuration";
    case PathClass::dependency_project: return "a dependency project's file";
    case PathClass::tsconfig: return "TypeScript configuration";
    case PathClass::installed_package: return "installed package outside the key";
    case PathClass::other: return "not declared";
    }
    return "?";
}

bool enforce_allows(Finding finding)
{
    switch (finding) {
    case Finding::none:
    case Finding::unkeyed_read:
    case Finding::unkeyed_package:
    case Finding::hoisted_package: return true;
    case Finding::read_outside_inputs:
    case Finding::tsconfig_read:
    case Finding::stray_write:
    case Finding::manifest_read:
    case Finding::toolchain_read:
    case Finding::dependency_read:
    case Finding::undeclared_network: return false;
    }
    return false;
}

bool Verdict::declared() const
{
    switch (why) {
    case PathClass::input:
    case PathClass::always:
    case PathClass::json_input:
    case PathClass::output:
    case PathClass::warm:
    case PathClass::dependency_output:
    case PathClass::ignored_read: return true;
    default: return false;
    }
}

std::optional<std::size_t> Rules::Data::project_of(std::string_view rel) const
{
    return project_holding(dirname_of(rel));
}

std::optional<std::size_t> Rules::Data::project_holding(std::string_view dir) const
{
    for (std::string_view at = dir;; at = dirname_of(at)) {
        if (auto p = ws->project_at(at))
            return p;
        if (at.empty())
            return std::nullopt;
    }
}

bool Rules::Data::other_manifest(std::string_view rel) const
{
    if (basename_of(rel) != "package.json")
        return false;
    auto p = ws->project_at(dirname_of(rel));
    return p && *p != project && ws->projects()[*p].package_json == rel;
}

std::optional<Verdict> Rules::Data::installed_package(std::string_view rel) const
{
    if (!installed)
        return std::nullopt;
    auto snapshot = installed->manifest_of(rel);
    if (!snapshot || (*snapshot < keyed_packages.size() && keyed_packages[*snapshot]))
        return std::nullopt;
    Verdict v{PathClass::installed_package, names_packages ? Finding::unkeyed_package : Finding::hoisted_package};
    v.package = *snapshot;
    return v;
}

std::optional<PathClass> Rules::Data::writable(std::string_view rel) const
{
    for (const std::string& s : scratch)
        if (qk::is_within(rel, s))
            return PathClass::scratch;
    if (outputs->contains(rel))
        return PathClass::output;
    if (warm && warm->contains(rel))
        return PathClass::warm;
    return std::nullopt;
}

bool Rules::Data::in_input_group(std::string_view rel) const
{
    if (!files)
        return false;
    auto index = files->find(rel);
    if (!index)
        return false;
    auto i = static_cast<std::uint32_t>(*index);
    for (const auto& group : key->groups)
        if (group.files && std::binary_search(group.files->begin(), group.files->end(), i))
            return true;
    return false;
}

bool Rules::Data::is_dependency_output(std::string_view rel) const
{
    if (dependency_output_files.contains(rel))
        return true;
    // The path itself and each directory above it, up to the workspace root (""), may be a root.
    for (std::string_view dir = rel;; dir = dirname_of(dir)) {
        if (auto it = dependency_roots.find(dir); it != dependency_roots.end())
            for (std::size_t i : it->second)
                if (dependency_outputs[i].outputs->matches(rel))
                    return true;
        if (dir.empty())
            return false;
    }
}

bool Rules::Data::is_ignored_read(std::string_view rel) const
{
    if (ignore_reads.matches(rel))
        return true;
    if (!ignore_dependency_reads.any_positive)
        return false;
    auto owner = project_of(rel);
    if (!owner || !dependency_project[*owner])
        return false;
    const std::string& proot = ws->projects()[*owner].root;
    std::string_view inside = rel;
    if (proot != ".")
        inside.remove_prefix(proot.size() + 1);
    return ignore_dependency_reads.matches(inside);
}

std::optional<std::string_view> Rules::relative(std::string_view path) const
{
    if (path == d_->root)
        return std::string_view();
    return relative_under(path, d_->root);
}

std::string Rules::package_name(std::uint32_t snapshot) const
{
    return d_->installed ? d_->installed->name(snapshot) : std::string();
}

const workspace::NetworkDeclaration& Rules::network() const
{
    return d_->network;
}

const InstalledPackages* Rules::installed() const
{
    return d_->installed.get();
}

std::vector<std::string> Rules::output_directories() const
{
    std::vector<std::string> dirs(d_->output_directories.begin(), d_->output_directories.end());
    std::sort(dirs.begin(), dirs.end());  // "a" sorts before "a/b": parents first
    return dirs;
}

namespace {

// The paths of `set` named whole whose name has no extension, sorted: taken for directories.
std::vector<std::string> named_directories(const key::OutputSet& set)
{
    std::vector<std::string> out;
    for (const auto& r : set.roots()) {
        std::string_view name = basename_of(r.path);
        if (r.whole && !r.path.empty() && name.find('.', 1) == std::string_view::npos)
            out.push_back(r.path);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace

std::vector<std::string> Rules::directory_outputs() const { return named_directories(*d_->outputs); }

std::vector<std::string> Rules::directory_warm_paths() const
{
    return d_->warm ? named_directories(*d_->warm) : std::vector<std::string>{};
}

std::vector<std::string> Rules::tool_cache_directories() const
{
    std::vector<std::string> out;
    const std::string& project = d_->ws->projects()[d_->project].root;
    for (const std::string& tree : held_trees()) {
        if (special_dir(basename_of(tree)) != SpecialDir::node_modules ||
            (tree != "node_modules" && tree != project + "/node_modules"))
            continue;
        for (std::string_view name : kToolCacheNames)
            out.push_back(tree + "/" + std::string(name));
    }
    return out;
}

Verdict Rules::read(std::string_view path) const
{
    auto rel = relative(path);
    if (!rel)
        return {PathClass::outside};
    return read_relative(*rel);
}

Verdict Rules::write(std::string_view path, bool create_or_remove) const
{
    auto rel = relative(path);
    if (!rel)
        return {PathClass::outside};
    return write_relative(*rel, create_or_remove);
}

Verdict Rules::read_relative(std::string_view rel) const
{
    const Data& d = *d_;
    if (rel.empty())
        return {PathClass::other};  // the workspace directory itself: listing it is free
    SpecialDir tree = special_tree(rel);
    if (tree == SpecialDir::qk)
        return {PathClass::qk_state};
    if (tree == SpecialDir::git)
        return {PathClass::git, Finding::unkeyed_read};
    if (tree == SpecialDir::node_modules) {
        if (auto v = d.installed_package(rel))
            return *v;
        return {PathClass::node_modules};
    }
    if (auto c = d.writable(rel))
        return {*c};
    if (d.in_input_group(rel) || d.under_whole_input_dir(rel) || d.named_input(rel) || d.under_linked_dir(rel))
        return {PathClass::input};
    if (d.always.contains(rel))
        return {PathClass::always};
    if (d.json_files.contains(rel) || d.json_targets.contains(rel))
        return {PathClass::json_input};
    if (d.is_dependency_output(rel))
        return {PathClass::dependency_output};
    if (d.is_ignored_read(rel))
        return {PathClass::ignored_read};
    if (d.covered_manifests.contains(rel))
        return {PathClass::covered_manifest};

    std::string_view name = basename_of(rel);
    if (is_dotenv(name))
        return {PathClass::dotenv, Finding::unkeyed_read};
    if (d.effect_files.contains(rel))
        return {PathClass::effect_file, Finding::read_outside_inputs};
    if (d.other_manifest(rel))
        return {PathClass::manifest, Finding::manifest_read};
    if (is_toolchain(name))
        return {PathClass::toolchain, Finding::toolchain_read};
    if (auto owner = d.project_of(rel); owner && d.dependency_project[*owner])
        return {PathClass::dependency_project, Finding::dependency_read, *owner};
    if (is_tsconfig(name))
        return {PathClass::tsconfig, Finding::tsconfig_read};
    return {PathClass::other, Finding::read_outside_inputs};
}

Verdict Rules::write_relative(std::string_view rel, bool create_or_remove) const
{
    const Data& d = *d_;
    if (rel.empty())
        return {PathClass::other, Finding::stray_write};
    SpecialDir tree = special_tree(rel);
    if (tree == SpecialDir::qk)
        return {PathClass::qk_state};
    // What git runs and what was installed are refused, so that no task's code runs outside its
    // sandbox (a hook, core.fsmonitor) and no task changes what another computes without a key noticing.
    if (tree == SpecialDir::git)
        return {is_git_machinery(rel) ? PathClass::git_machinery : PathClass::git, Finding::stray_write};
    if (tree == SpecialDir::node_modules) {
        if (is_installed_file(rel))
            return {PathClass::installed_files, Finding::stray_write};
        return {PathClass::node_modules};
    }
    if (auto c = d.writable(rel))
        return {*c};
    if (create_or_remove && d.output_directories.contains(rel))
        return {PathClass::output_directory};
    return {PathClass::other, Finding::stray_write};
}

}  // namespace qk::rules
