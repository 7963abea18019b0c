// qk report fix (report_fix_hoisted.hpp).
#include "report_fix_hoisted.hpp"

#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/util/io.hpp"
#include "qk/util/printable.hpp"
#include "qk/workspace/json.hpp"

namespace qk::cli {

namespace {

// The major of the pnpm the root package.json's packageManager names: 0 when it names none.
int pnpm_major(const workspace::Workspace& ws)
{
    auto text = read_file((ws.root() / "package.json").string());
    auto doc = text ? workspace::parse_json(*text, "package.json", workspace::TrailingCommas::allow)
                    : Result<workspace::Json>(text.error());
    const workspace::Json* manager = doc && doc->is_object() ? doc->find("packageManager") : nullptr;
    int major = 0;
    if (manager && manager->is_string() && manager->as_string().starts_with("pnpm@")) {
        const std::string_view v = std::string_view(manager->as_string()).substr(5);
        std::from_chars(v.data(), v.data() + v.size(), major);  // "9.15.0": 9; not a number: 0
    }
    return major;
}

}  // namespace

std::string package_extensions_file(const workspace::Workspace& ws)
{
    // pnpm 10 reads its settings from pnpm-workspace.yaml; pnpm 9 from the root package.json's "pnpm".
    const int major = pnpm_major(ws);
    return major > 0 && major < 10 ? "package.json" : "pnpm-workspace.yaml";
}

std::string package_extensions_home(const workspace::Workspace& ws)
{
    const int major = pnpm_major(ws);
    if (major > 0 && major < 10)
        return "package.json's pnpm.packageExtensions (pnpm " + std::to_string(major) + ")";
    return "pnpm-workspace.yaml's packageExtensions";
}

std::vector<std::string> hoisted_lines(const std::map<std::string, std::size_t>& hoisted, const workspace::Workspace& ws)
{
    std::vector<std::string> out;
    // Installed packages read through pnpm's hoisting: what the report cannot say (which package imports
    // each), and where the remedy does not fit at all, said once a package.
    std::vector<std::string> types, imported;
    for (const auto& [name, tasks] : hoisted)
        (name.starts_with("@types/") ? types : imported).push_back(fmt::format("{} ({})", name, tasks));
    if (!types.empty())
        out.push_back(fmt::format(
            "{}: tsc loads every package in node_modules/@types (where pnpm hoists them) with no import, so no "
            "package imports them and packageExtensions does not fit; name the types each project uses in its "
            "tsconfig's compilerOptions.types, or add them to its devDependencies (tasks reading each in brackets)",
            printable(fmt::format("{}", fmt::join(types, ", ")))));
    if (!imported.empty())
        out.push_back(fmt::format(
            "{}: read through pnpm's hoisting, and the report names no installed package importing it: declare it in "
            "the project's package.json when its own code imports it, or as the importing package's dependency "
            "in {} ('<importer>': {{dependencies: {{<name>: <range>}}}}) (tasks reading each in brackets)",
            printable(fmt::format("{}", fmt::join(imported, ", "))), package_extensions_home(ws)));
    return out;
}

}  // namespace qk::cli
