// Who imports a package a task found through pnpm's hoisting: among the installed packages whose files the
// task read, those that import it without depending on it. pnpm's packageExtensions can then declare the
// dependency where it is missing, which keys the package with the rest of what the importers install.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "qk/audit/findings.hpp"
#include "qk/record/recording.hpp"
#include "qk/rules/rules.hpp"

namespace qk::audit {

// For each hoisted package (name -> its lockfile snapshot), its installed version and importers
// ("name@version"), read from the script files (.js, .cjs, .mjs, .ts, .d.ts...) the recording read in
// other packages' own directories. A package none of them imports (the project's own code does, or a
// tool loads it by name, as tsc loads node_modules/@types) has no entry. A script naming one of node's
// built-in modules (events, buffer...) gets the built-in from node, not the package: only TypeScript
// files, which tsc resolves through node_modules, import those.
std::map<std::string, TaskFindings::HoistedImport> hoisted_importers(
    const record::Recording& recording, const rules::Rules& rules,
    const std::map<std::string, std::uint32_t>& hoisted);

// Whether `source` imports `name` or a path in it: require("name"), import ... from 'name/x', import("name"),
// export ... from "name", /// <reference types="name" />.
bool imports_package(std::string_view source, std::string_view name);

}  // namespace qk::audit
