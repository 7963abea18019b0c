// Names qk did not choose (paths, task ids, commands from the workspace) as text for a terminal: a file
// named with ESC ] 0 ; ... BEL or ESC [ 2 K must not retitle the terminal, hide its own finding or erase
// the lines above it. Applied where text output is formatted; findings, reports and JSON keep the bytes.
//
// The rules (docs/sandbox.md says them for users):
//   - printable ASCII and valid UTF-8 stay as they are ("é", "日本");
//   - a backslash is written "\\", so that every backslash shown starts an escape;
//   - newline, tab and carriage return as "\n", "\t", "\r"; every other C0 control and DEL as "\x1b";
//   - each byte that is not part of valid UTF-8 (a stray byte, an overlong form, a surrogate, a sequence
//     cut short) as "\xff";
//   - the characters that drive a terminal or reorder a line though valid UTF-8 as "\u0085": the C1
//     controls U+0080-U+009F, the line and paragraph separators U+2028 and U+2029, and the bidirectional
//     controls U+061C, U+200E, U+200F, U+202A-U+202E and U+2066-U+2069 (the "Trojan Source" set).
// Unambiguous: each escape stands for exactly one byte sequence, so two names never print the same.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qk {

// `s` as one line of text, escaped by the rules above.
std::string printable(std::string_view s);

// Each of `items` through `printable`, joined by `separator`: "a, b, c" for a list of names.
std::string printable_join(const std::vector<std::string>& items, std::string_view separator);

// `s` as the inside of a JSON string literal (qk prints its suggestions as JSON fragments to paste):
// '"' as "\"", controls and the characters above as JSON's own escapes ("\n", "\u001b", "\u202e"), so
// the fragment still parses to the same name. A byte that is not UTF-8 has no JSON form: it is written
// "\xff", which a JSON parser refuses rather than reading some other name.
std::string printable_json(std::string_view s);

// A message qk wrote that may quote such names (an error, a note): as `printable`, but the message's
// own line breaks are kept. Not unambiguous about newlines; for messages only, never for a name alone.
std::string printable_message(std::string_view s);

}  // namespace qk
