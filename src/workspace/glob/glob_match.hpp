// The compiled form of a glob: plain alternatives (no extglob left but a nested `!(…)`) made of path segments,
// each segment a matcher for one path component. glob_convert.cpp and glob_compile.cpp build them;
// glob_match.cpp matches components and glob_alternative.cpp whole paths, allocating only for the memo of a
// segment whose groups backtrack (and then only past a few hundred states).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace qk::workspace::glob_detail {

// A character class: code point ranges, with a bitmap for ASCII.
struct ClassSet {
    bool negated = false;
    std::vector<std::pair<char32_t, char32_t>> ranges;
    uint64_t ascii[2] = {0, 0};

    void add(char32_t lo, char32_t hi);
    bool contains(char32_t c) const;
};

// One matcher step inside a path component.
struct Node {
    enum class Kind : uint8_t {
        literal,  // `text`, byte for byte
        any,      // `?`: one character
        star,     // `*`: any run of characters (never '/', which components do not hold)
        cls,      // `[...]`: one character in (or not in) `cls`
        alt,      // `{a,b}`, `@(a|b)`, …: one of `alts`; an empty alternative matches the empty string
        neg,      // `!(a|b)` nested inside another group: any text none of `alts` matches (bash's meaning)
    };
    Kind kind = Kind::literal;
    std::string text;
    ClassSet cls;
    std::vector<std::vector<Node>> alts;
    // In a segment that backtracks (`pattern`, not simple): the node's number in pre-order, and one past
    // the last number of its descendants, so a `neg` node's alternatives number [id + 1, subtree_end).
    uint32_t id = 0, subtree_end = 0;
};
using Nodes = std::vector<Node>;

// A pattern for one path component, or `**`.
struct Segment {
    enum class Kind : uint8_t {
        literal,   // the component equals `lead`
        globstar,  // `**`: zero or more components
        any_name,  // `*`: any one component
        affix,     // `lead*tail`: starts with lead, ends with tail
        any_of,    // one of `options` (a segment whose groups multiply out to a few group-free ones)
        pattern,   // anything else: `nodes` (for a simple one, lead/tail/min_size are quick rejects)
    };
    Kind kind = Kind::pattern;
    std::string lead, tail;
    size_t min_size = 0;
    Nodes nodes;
    std::vector<Segment> options;        // any_of: at most 32
    std::vector<uint32_t> by_last_byte;  // any_of: for each last byte, the options that can end with it
    bool simple = true;                  // no alt/neg node: matched by the linear greedy algorithm
    uint32_t node_count = 0;             // pattern, not simple: the nodes numbered, nested ones included
};

// Builds a segment from its nodes, picking the cheapest kind that matches the same names.
Segment make_segment(Nodes nodes);
Segment globstar_segment();
bool match_segment(const Segment& seg, std::string_view component);

// One plain signed glob: a literal prefix and the segments after it, with a shape for the common cases.
struct Alternative {
    enum class Shape : uint8_t {
        exact,     // the path equals `prefix`
        all,       // `**`: every path
        tree,      // `prefix/**` or `prefix/**/*`: anything strictly under prefix
        basename,  // `prefix/**/X`: under prefix, the last component matches rest[1]
        general,   // under prefix, the components match `rest`
    };
    bool negative = false;
    Shape shape = Shape::general;
    std::string prefix;     // literal leading components, escapes resolved, '/'-joined, no trailing '/'
    bool anchored = false;  // there is a prefix, even an empty one (`/**/x` has the prefix "")
    std::vector<Segment> rest;
    std::string text;  // the glob it was built from, for expansion()

    bool matches(std::string_view path) const;
    bool may_match_under(std::string_view dir) const;
    // True when this (negative) alternative excludes every path under `dir`.
    bool covers_tree(std::string_view dir) const;
};

// Builds an alternative from its segments (leading literals become the prefix; `**` runs collapse; a
// trailing `**` needs at least one component).
Alternative make_alternative(std::vector<Segment> segments, bool negative, std::string text);

}  // namespace qk::workspace::glob_detail
