// pnpm's packageExtensions written into the file pnpm reads them from, keeping everything else as written
// (comments, order, quoting): a dependency an installed package imports without declaring it (qk report
// fix, for what the audit found through pnpm's hoisting).
#pragma once

#include <string>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk::workspace {

// `importer` ("minipass@3.3.6", or a bare name) depends on `name` at `version`.
struct PackageExtension {
    std::string importer, name, version;
};

// pnpm-workspace.yaml's text with packageExtensions[importer].dependencies[name] added where missing, in
// the file's block style and indentation. Errors (said by hand instead): a flow-style map on the way, an
// entry that is not a map, a text that does not parse or would not after the edit.
Result<std::string> add_package_extension_yaml(std::string_view text, const PackageExtension& extension);

// The same in a package.json's "pnpm" (pnpm 9 reads its settings there).
Result<std::string> add_package_extension_json(std::string_view text, const PackageExtension& extension);

}  // namespace qk::workspace
