#include "pnpm_read.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include <fmt/format.h>

namespace qk::workspace::pnpm_read {

using pnpm_yaml::Node;

void Reader::fail(const Node& at, std::string_view what, std::string_view todo) const
{
    fail_at(at.line, at.column, what, todo);
}

void Reader::fail_at(std::uint32_t line, std::uint32_t column, std::string_view what, std::string_view todo) const
{
    if (!failure_)
        failure_ = error(fmt::format("{}:{}:{}: {}; {}", file_, line, column, what, todo));
}

void Reader::expected(const Node& n, std::string_view what) const
{
    fail(n,
         fmt::format("expected {}, found {}{}", what, pnpm_yaml::describe(n),
                     n.is_scalar() && !n.is_null() ? " '" + n.text + "'" : std::string()),
         "regenerate the file with `pnpm install`, or fix it by hand");
}

const Node* Reader::find(const Node& map, std::string_view key) const
{
    if (!map.is_map())
        return nullptr;
    for (std::uint32_t i = 0; i < map.count; i += 2) {
        const Node& k = doc_.child(map, i);
        if (k.is_scalar() && k.text == key)
            return &doc_.child(map, i + 1);
    }
    return nullptr;
}

const std::string& Reader::string(const Node& n) const
{
    static const std::string none;
    if (!n.is_scalar() || n.is_null()) {
        expected(n, "a string");
        return none;
    }
    return n.text;
}

bool Reader::boolean(const Node& n) const
{
    if (n.is_scalar() && n.plain) {
        if (n.text == "true")
            return true;
        if (n.text == "false")
            return false;
    }
    expected(n, "true or false");
    return false;
}

std::size_t Reader::unsigned_number(const Node& n) const
{
    if (n.is_scalar() && n.plain && !n.text.empty() && n.text.size() < 19 &&
        std::all_of(n.text.begin(), n.text.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return std::stoull(n.text);
    expected(n, "a whole number");
    return 0;
}

void Reader::strings(const Node& seq, std::vector<std::string>& out, bool null_is_none) const
{
    if (seq.is_null())
        return;
    if (!seq.is_seq())
        return expected(seq, "a sequence");
    for (std::uint32_t i = 0; i < seq.count && !failed(); ++i)
        if (const Node& item = doc_.child(seq, i); !null_is_none || !item.is_null())
            out.push_back(string(item));
}

void Reader::platforms(const Node& seq, std::vector<std::string>& out) const
{
    strings(seq, out, true);
}

void Reader::string_map(const Node& map, std::map<std::string, std::string, std::less<>>& out) const
{
    for_each(map, [&](const std::string& key, const Node& v) { out[key] = string(v); });
}

std::string Reader::canonical(const Node& n) const
{
    switch (n.kind) {
    case Node::Kind::scalar: return n.text;
    case Node::Kind::seq: {
        std::string out = "[";
        for (std::uint32_t i = 0; i < n.count; ++i)
            out += (i ? "," : "") + canonical(doc_.child(n, i));
        return out + "]";
    }
    case Node::Kind::map: {
        std::vector<std::pair<std::string, std::string>> entries;
        for (std::uint32_t i = 0; i < n.count; i += 2)
            entries.emplace_back(canonical(doc_.child(n, i)), canonical(doc_.child(n, i + 1)));
        std::sort(entries.begin(), entries.end());
        std::string out = "{";
        for (std::size_t i = 0; i < entries.size(); ++i)
            out += (i ? "," : "") + entries[i].first + ":" + entries[i].second;
        return out + "}";
    }
    }
    return {};
}

}  // namespace qk::workspace::pnpm_read
