// A small read-only YAML tree built from libyaml's events, with 1-based line/column marks on every
// node, for pnpm's files (pnpm-lock.yaml, node_modules/.modules.yaml). Private to src/workspace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::workspace::pnpm_yaml {

struct Node {
    enum class Kind : std::uint8_t { scalar, map, seq };
    Kind kind = Kind::scalar;
    bool plain = true;  // an unquoted scalar: only these can be null or booleans
    std::uint32_t line = 0, column = 0;
    // Children, in Doc::kids[first, first + count): a map's are key, value, key, value, ...
    std::uint32_t first = 0, count = 0;
    std::string text;  // a scalar's value

    bool is_map() const { return kind == Kind::map; }
    bool is_seq() const { return kind == Kind::seq; }
    bool is_scalar() const { return kind == Kind::scalar; }
    // A plain empty scalar, `~` or `null`.
    bool is_null() const { return kind == Kind::scalar && plain && (text.empty() || text == "~" || text == "null"); }
};

struct Doc {
    std::vector<Node> nodes;
    std::vector<std::uint32_t> kids;
    std::uint32_t root = 0;

    const Node& node(std::uint32_t i) const { return nodes[i]; }
    const Node& root_node() const { return nodes[root]; }
    // The i-th child of `n` (for maps: even i are keys, odd i values).
    const Node& child(const Node& n, std::uint32_t i) const { return nodes[kids[n.first + i]]; }
};

// "seq", "map", "scalar" (or "null"): for messages saying what was found.
const char* describe(const Node& n);

// Parses every document of `text`. Errors are "<file>:<line>:<col>: malformed YAML: ...; <what to do>".
Result<std::vector<Doc>> parse(std::string_view text, const std::string& file, std::string_view what_to_do);

}  // namespace qk::workspace::pnpm_yaml
