// What enforce keeps read-only inside the trees it otherwise leaves open to every task (.git and every
// node_modules): what git executes or reads its configuration from, and what a package manager
// installed. A task that rewrites them changes what git runs outside any sandbox, or what another task
// computes without its key changing; what tools keep there (node_modules/.cache, .vite, ...) and the
// rest of .git (objects, refs, the index) stay writable. One definition: the rules, the sandbox's
// binds and grants, and the report reader all ask it.
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace qk::rules {

// For a workspace-relative path in .git: whether it is git's configuration or hooks (`config`,
// `config.worktree`, `commondir`, anything in `hooks`, in .git itself or a submodule's or worktree's git
// directory within it). False for a path in no .git.
bool is_git_machinery(std::string_view rel);

// The directories in node_modules that tools keep their caches in, by the tools' own names (vite and
// vitest, webpack's loaders and nx, vite's config bundler).
inline constexpr std::array<std::string_view, 4> kToolCacheNames{".cache", ".vite", ".vitest", ".vite-temp"};

// For a workspace-relative path in node_modules: whether it is what a package manager installed there
// (the packages, .pnpm, .bin, its own state files) rather than what a tool keeps there (an entry whose
// name starts with a dot but for those). node_modules itself counts as installed. False outside.
bool is_installed_file(std::string_view rel);

// The entries of special tree `tree` (a .git or node_modules directory, workspace-relative) that a task
// may write in as it runs, as they are now, each workspace-relative: git's directories but hooks,
// modules and worktrees; the tool caches of node_modules. Everything else in the tree is read-only.
std::vector<std::string> writable_entries(int root_fd, const std::string& tree);

}  // namespace qk::rules
