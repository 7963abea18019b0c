// Edits to a JSON (or JSONC) configuration file's text that keep everything else as written: its
// formatting, key order and comments (qk report fix). A value's place comes from the parsed Json's
// line:column; the edit is spliced into the text, never the file written again from the tree.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/workspace/json.hpp"

namespace qk::workspace {

// `array` (parsed from `text`) with `items` (JSON texts, such as "\"{projectRoot}/x\"") added at its end,
// on lines of their own in the indentation of its last element when it spans lines, inline otherwise.
Result<std::string> append_to_array(std::string_view text, const Json& array, const std::vector<std::string>& items);

// Where a new member goes: first, beside what it belongs with in a configuration object (a target's
// "inputs" before its "cache"); last, as a person adds a section to a package.json ("nx" after the
// dependencies, not before "name").
enum class MemberPlace : std::uint8_t { first, last };

// `object` (parsed from `text`) with the member `key`: `value` (a JSON text) added at `place`.
Result<std::string> insert_member(std::string_view text, const Json& object, std::string_view key,
                                  std::string_view value, MemberPlace place = MemberPlace::first);

// `object` with keys[0]: {keys[1]: {... value}} added at `place`: the objects `keys` name that are
// missing, each a line per member in the file's indentation where `object` spans lines.
Result<std::string> insert_nested_member(std::string_view text, const Json& object, std::span<const std::string> keys,
                                         std::string_view value, MemberPlace place = MemberPlace::first);

// `value` (parsed from `text`: true, false or null) replaced by `replacement` (a JSON text): a target's
// "network": false that qk report fix makes the list of hosts it reached.
Result<std::string> replace_literal(std::string_view text, const Json& value, std::string_view replacement);

// The JSON text of a string.
std::string json_string(std::string_view s);

}  // namespace qk::workspace
