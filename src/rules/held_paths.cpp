#include "qk/rules/held_paths.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <optional>

#include "qk/util/special_names.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::rules {

namespace {

// The part of `rel` below its first component that names `kind` ("" for that directory itself), or
// nothing when no component does.
std::optional<std::string_view> below_first(std::string_view rel, SpecialDir kind)
{
    for (std::size_t start = 0; start <= rel.size();) {
        std::size_t slash = rel.find('/', start);
        std::size_t end = slash == std::string_view::npos ? rel.size() : slash;
        if (special_dir(rel.substr(start, end - start)) == kind)
            return slash == std::string_view::npos ? std::string_view() : rel.substr(slash + 1);
        if (slash == std::string_view::npos)
            break;
        start = slash + 1;
    }
    return std::nullopt;
}

std::string_view first_component(std::string_view rel)
{
    return rel.substr(0, rel.find('/'));
}

// Where git keeps what it never runs: objects, references and their logs. A branch may be named
// "config" or "hooks".
constexpr std::array<std::string_view, 3> kGitData{"objects", "refs", "logs"};
// What git reads its configuration from, with the lock files git writes it through.
constexpr std::array<std::string_view, 5> kGitConfiguration{"config", "config.lock", "config.worktree",
                                                             "config.worktree.lock", "commondir"};
// Directories of git's that hold other git directories, with their own configuration and hooks.
constexpr std::array<std::string_view, 3> kGitHolders{"hooks", "modules", "worktrees"};
// What package managers keep at the top of node_modules besides packages.
constexpr std::array<std::string_view, 10> kInstalledDotNames{
    ".pnpm", ".bin", ".modules.yaml", ".package-lock.json", ".yarn-state.yml", ".yarn-integrity",
    ".pnpm-workspace-state.json", ".pnpm-workspace-state-v1.json", ".yarn", ".ignored"};

template <std::size_t N>
bool among(std::string_view name, const std::array<std::string_view, N>& names)
{
    for (std::string_view n : names)
        if (name == n)
            return true;
    return false;
}

}  // namespace

bool is_git_machinery(std::string_view rel)
{
    auto in_git = below_first(rel, SpecialDir::git);
    if (!in_git || in_git->empty())
        return in_git.has_value();  // .git itself: removing or replacing it replaces its configuration
    if (among(first_component(*in_git), kGitData))
        return false;
    for (std::size_t start = 0; start <= in_git->size();) {
        std::size_t slash = in_git->find('/', start);
        std::string_view name = in_git->substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (name == "hooks")
            return true;
        if (slash == std::string_view::npos)
            return among(name, kGitConfiguration);
        start = slash + 1;
    }
    return false;
}

bool is_installed_file(std::string_view rel)
{
    auto in_tree = below_first(rel, SpecialDir::node_modules);
    if (!in_tree)
        return false;
    std::string_view name = first_component(*in_tree);
    return name.empty() || !name.starts_with('.') || among(name, kInstalledDotNames);
}

std::vector<std::string> writable_entries(int root_fd, const std::string& tree)
{
    std::vector<std::string> out;
    const SpecialDir kind = special_dir(tree.substr(tree.rfind('/') + 1));
    UniqueFd fd(::openat(root_fd, tree.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    DIR* d = fd.valid() ? ::fdopendir(fd.get()) : nullptr;
    if (!d)
        return out;
    (void)fd.release();  // the DIR owns it now
    while (const dirent* e = ::readdir(d)) {
        std::string_view name = e->d_name;
        if (name == "." || name == "..")
            continue;
        // By name first: a node_modules holds a package (or a link to one) an entry, and every task
        // starting lists each node_modules of the workspace.
        std::string rel = tree + "/" + std::string(name);
        const bool writable = kind == SpecialDir::git ? !among(name, kGitHolders) && !is_git_machinery(rel)
                                                      : !is_installed_file(rel);
        if (!writable)
            continue;
        // A file of its own is written by replacing it in the tree, which stays read-only.
        bool directory = e->d_type == DT_DIR;
        if (e->d_type == DT_UNKNOWN) {
            struct stat st {};
            directory = ::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        }
        if (directory)
            out.push_back(std::move(rel));
    }
    ::closedir(d);
    return out;
}

}  // namespace qk::rules
