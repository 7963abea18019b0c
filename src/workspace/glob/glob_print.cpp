// Printing compiled nodes back as glob text, for Glob::expansion() and to tell alternatives apart. Specials
// are escaped and groups print as `{a,b}` (or `!(a|b)` when nested), the form of Nx's convert_glob output.
#include "glob_print.hpp"

#include <algorithm>

namespace qk::workspace::glob_detail {

namespace {

void print_node(std::string& out, const Node& n, int depth);

void print_class(std::string& out, const ClassSet& cls)
{
    out += cls.negated ? "[!" : "[";
    auto put = [&](char32_t c) {
        std::string u8;
        if (c < 0x80) {
            u8 += static_cast<char>(c);
        } else if (c < 0x800) {
            u8 += static_cast<char>(0xC0 | (c >> 6));
            u8 += static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            u8 += static_cast<char>(0xE0 | (c >> 12));
            u8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            u8 += static_cast<char>(0x80 | (c & 0x3F));
        } else {
            u8 += static_cast<char>(0xF0 | (c >> 18));
            u8 += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            u8 += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            u8 += static_cast<char>(0x80 | (c & 0x3F));
        }
        out += u8;
    };
    // `]` and a range starting at `-` only read right after `[`; a lone `-` reads at the end.
    auto ranges = cls.ranges;
    std::stable_partition(ranges.begin(), ranges.end(), [](auto r) { return r.first == ']' || r.first == '-'; });
    std::stable_partition(ranges.begin(), ranges.end(), [](auto r) { return !(r.first == '-' && r.second == '-'); });
    for (auto [lo, hi] : ranges) {
        put(lo);
        if (hi != lo) {
            out += '-';
            put(hi);
        }
    }
    out += ']';
}

void print_node(std::string& out, const Node& n, int depth)
{
    switch (n.kind) {
    case Node::Kind::literal:
        for (char c : n.text) {
            bool special = std::string_view("\\*?[]{}()/").find(c) != std::string_view::npos ||
                           (depth > 0 && (c == ',' || c == '|')) || (c == '!' && out.empty());
            if (special)
                out += '\\';
            out += c;
        }
        return;
    case Node::Kind::any: out += '?'; return;
    case Node::Kind::star: out += '*'; return;
    case Node::Kind::cls: print_class(out, n.cls); return;
    case Node::Kind::alt:
        if (n.alts.size() == 1 && !n.alts[0].empty()) {
            print_nodes(out, n.alts[0], depth);
            return;
        }
        [[fallthrough]];
    case Node::Kind::neg: {
        bool neg = n.kind == Node::Kind::neg;
        out += neg ? "!(" : "{";
        for (size_t i = 0; i < n.alts.size(); ++i) {
            if (i > 0)
                out += neg ? '|' : ',';
            print_nodes(out, n.alts[i], depth + 1);
        }
        out += neg ? ')' : '}';
        return;
    }
    }
}

}  // namespace

void print_nodes(std::string& out, const Nodes& nodes, int depth)
{
    for (const Node& n : nodes)
        print_node(out, n, depth);
}

}  // namespace qk::workspace::glob_detail
