// node_modules/.modules.yaml: what pnpm recorded about an install (pnpm 9 writes YAML, pnpm 10 JSON).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/pnpm_store_index.hpp"

namespace qk::workspace {

// What pnpm recorded about an install (pnpm 9 writes YAML, pnpm 10 JSON).
struct PnpmModules {
    std::string package_manager;  // "pnpm@9.15.9"
    std::string node_linker;      // "isolated", "hoisted", "pnp"
    std::string virtual_store_dir = ".pnpm";
    PnpmLayout layout;  // from packageManager and virtualStoreDirMaxLength
    std::vector<std::string> hoist_pattern, public_hoist_pattern;
    // depPath or importer dir -> alias -> "private" | "public"
    std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>> hoisted_dependencies;
};
Result<PnpmModules> parse_pnpm_modules_yaml(const std::string& path);
Result<PnpmModules> parse_pnpm_modules_yaml_text(std::string_view text, const std::string& file);

}  // namespace qk::workspace
