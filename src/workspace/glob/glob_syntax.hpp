// The syntax tree of one glob body (the text after a negating '!'), before Nx's extglob rewrite.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "glob_match.hpp"

namespace qk::workspace::glob_detail {

struct Item {
    enum class Kind : uint8_t { literal, sep, any, star, cls, brace, group };
    enum class Group : uint8_t {
        plain,         // `(a|b)`: Nx reads a bare group as one of its alternatives
        exact_one,     // `@(a|b)`
        one_or_more,   // `+(a|b)`: Nx's rewrite makes it exactly one
        zero_or_one,   // `?(a|b)`
        zero_or_more,  // `*(a|b)`: Nx's rewrite makes it zero or one (see glob_convert.cpp)
        negated,       // `!(a|b)`
        negated_file,  // `!(a|b).`: set by the rewrite when a '.' follows (Nx's NegatedFileName)
        negated_wild,  // `!(a|b)*`: set by the rewrite when a '*' follows (Nx's NegatedWildcard)
    };
    Kind kind = Kind::literal;
    Group group = Group::plain;
    std::string text;                     // literal, escapes resolved
    int stars = 0;                        // star: how many '*' in the run (a lone `**` component is the globstar)
    ClassSet cls;                         // cls
    std::vector<std::vector<Item>> alts;  // brace, group (a brace's dropped empty alternatives are gone)
    size_t offset = 0;                    // byte offset in the whole pattern, for errors
};
using Items = std::vector<Item>;

struct SyntaxError {
    size_t offset = 0;  // byte offset in the whole pattern
    std::string what;
};

// No pattern stands for more plain globs than this (Nx's rewrite multiplies branches out).
constexpr size_t kMaxAlternatives = 1024;

// Parses `body`, which starts at byte `base` of the whole pattern. False with `err` set on a syntax error.
bool parse_items(std::string_view body, size_t base, Items& out, SyntaxError& err);
// Appends to `out` the patterns `seq` stands for once braces whose alternatives hold '/' are expanded, so
// each splits into components. False past kMaxAlternatives.
bool expand_slash_braces(const Items& seq, std::vector<Items>& out);
// `seq` cut at its separators; a trailing '/' leaves an empty last component.
std::vector<Items> split_components(const Items& seq);
// Only literal text and separators, not ending in '/': the pattern names one path.
bool is_literal_syntax(const Items& items);

}  // namespace qk::workspace::glob_detail
