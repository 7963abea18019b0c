// The names that make a workspace path special whatever a task declares (beside .git, .qk and
// node_modules, qk/util/special_names.hpp): dotenv files, version and package managers'
// configuration, TypeScript configuration; and the path arithmetic the rules use (containment is
// qk/util/path_within.hpp's).
#pragma once

#include <string_view>

namespace qk::rules {

std::string_view basename_of(std::string_view path);
std::string_view dirname_of(std::string_view path);  // "" for a path at the root

// .env and the files Nx loads beside it: .env.local, .env.build, .build.env, .local.env ...
bool is_dotenv(std::string_view basename);
// Files that pick a tool's version or configure a package manager (.nvmrc, .npmrc, .tool-versions ...).
bool is_toolchain(std::string_view basename);
// tsconfig.json, tsconfig.base.json, tsconfig.app.json ...
bool is_tsconfig(std::string_view basename);

}  // namespace qk::rules
