// node_modules/.modules.yaml: what pnpm recorded about an install (pnpm/pnpm:pkg-manager/modules-yaml;
// research §3.5). pnpm 9 writes block YAML, pnpm 10 JSON, which is YAML too.
#include "qk/workspace/pnpm_modules.hpp"

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "pnpm_read.hpp"

namespace qk::workspace {

namespace {

constexpr std::string_view reinstall = "pnpm rewrites it on `pnpm install`";

// "pnpm@10.34.9" -> 10; 0 when it names no pnpm (or a major no pnpm has: the fuzzer's 1077777777...
// overflowed an int).
int pnpm_major_of(const std::string& package_manager)
{
    if (!package_manager.starts_with("pnpm@"))
        return 0;
    int major = 0;
    for (std::size_t i = 5; i < package_manager.size() && package_manager[i] >= '0' && package_manager[i] <= '9'; ++i) {
        major = major * 10 + (package_manager[i] - '0');
        if (major > 9999)
            return 0;
    }
    return major;
}

}  // namespace

Result<PnpmModules> parse_pnpm_modules_yaml_text(std::string_view text, const std::string& file)
{
    QK_TRY(docs, pnpm_yaml::parse(text, file, reinstall));
    if (docs->size() != 1)
        return error(fmt::format("{}:1:1: expected one YAML document, found {}; {}", file, docs->size(), reinstall));
    const pnpm_yaml::Doc& doc = docs->front();
    pnpm_read::Reader r(doc, file);
    PnpmModules out;
    const pnpm_yaml::Node& root = doc.root_node();
    if (!root.is_map())
        r.fail(root, fmt::format("expected a mapping, found {}", pnpm_yaml::describe(root)), reinstall);
    bool has_max_length = false;
    r.for_each(root, [&](const std::string& key, const pnpm_yaml::Node& v) {
        if (key == "packageManager")
            out.package_manager = r.string(v);
        else if (key == "nodeLinker")
            out.node_linker = r.string(v);
        else if (key == "virtualStoreDir")
            out.virtual_store_dir = r.string(v);
        else if (key == "virtualStoreDirMaxLength") {
            out.layout.max_length = r.unsigned_number(v);
            has_max_length = true;
        } else if (key == "hoistPattern")
            r.strings(v, out.hoist_pattern);
        else if (key == "publicHoistPattern")
            r.strings(v, out.public_hoist_pattern);
        else if (key == "hoistedDependencies")
            r.for_each(v, [&](const std::string& from, const pnpm_yaml::Node& aliases) {
                r.string_map(aliases, out.hoisted_dependencies[from]);
            });
    });
    const int major = pnpm_major_of(out.package_manager);
    if (major == 0)
        r.fail(root, fmt::format("`packageManager` is '{}', not pnpm@<version>", out.package_manager),
               "the .pnpm directory names depend on the pnpm major; reinstall with pnpm");
    if (r.failure())
        return *r.failure();
    out.layout.pnpm_major = major;
    if (!has_max_length)  // before pnpm 9.1 the length was fixed at 120
        out.layout.max_length = 120;
    return out;
}

Result<PnpmModules> parse_pnpm_modules_yaml(const std::string& path)
{
    QK_TRY(text, qk::read_file(path));
    return parse_pnpm_modules_yaml_text(*text, path);
}

}  // namespace qk::workspace
