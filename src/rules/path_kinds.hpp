// The names that make a workspace path special whatever a task declares: .git, node_modules, qk's
// state, dotenv files, version and package managers' configuration, TypeScript configuration.
#pragma once

#include <string_view>

namespace qk::rules {

// Whether any '/'-separated component of `path` is exactly `name`.
bool has_component(std::string_view path, std::string_view name);
// Which of the directories every task may touch `path` lies in, in one pass: .git wins over
// node_modules (a package's own .git is still Git's).
enum class OpenTree { none, git, node_modules };
OpenTree open_tree(std::string_view path);
// Whether `path` is `dir` or lies under it, by whole components ("a/b" is under "a", "a/bc" is not).
bool is_under(std::string_view path, std::string_view dir);
std::string_view basename_of(std::string_view path);
std::string_view dirname_of(std::string_view path);  // "" for a path at the root

// .env and the files Nx loads beside it: .env.local, .env.build, .build.env, .local.env ...
bool is_dotenv(std::string_view basename);
// Files that pick a tool's version or configure a package manager (.nvmrc, .npmrc, .tool-versions ...).
bool is_toolchain(std::string_view basename);
// tsconfig.json, tsconfig.base.json, tsconfig.app.json ...
bool is_tsconfig(std::string_view basename);

}  // namespace qk::rules
