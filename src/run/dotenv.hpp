// Dotenv files, read as Nx reads a run-commands `envFile`: the dotenv package's syntax, then
// dotenv-expand's ${VAR} references.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::run {

struct DotenvEntry {
    std::string name, value;
    bool literal = false;  // single-quoted: no ${VAR} expansion
};

// KEY=VALUE lines: `export ` before the key, `#` comments (whole lines, or after an unquoted value),
// values in '', "" (where \n and \r are newlines) or `` quotes, which may span lines. A key given twice
// keeps its last value. Lines that are none of these are ignored, as dotenv ignores them.
std::vector<DotenvEntry> parse_dotenv(std::string_view text);

// Reads and parses `path`; `display` names it in the error when it cannot be read.
Result<std::vector<DotenvEntry>> read_dotenv(const std::filesystem::path& path, std::string_view display);

// Expands $NAME, ${NAME}, ${NAME:-default} and ${NAME-default} in `value` (\$ is a plain '$');
// `lookup` gives a variable's value, nullopt when unset.
std::string expand_dotenv_value(std::string_view value,
                                const std::function<std::optional<std::string>(std::string_view)>& lookup);

}  // namespace qk::run
