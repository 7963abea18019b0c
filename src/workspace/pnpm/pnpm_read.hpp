// Typed reading of a pnpm_yaml::Doc with messages that say file:line:column, what was expected and what
// to do. A mistake throws Failure, which the parse_* functions turn into an Error: it never leaves them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "pnpm_yaml.hpp"

namespace qk::workspace::pnpm_read {

struct Failure {
    std::string message;
};

class Reader {
public:
    Reader(const pnpm_yaml::Doc& doc, const std::string& file) : doc_(doc), file_(file) {}

    [[noreturn]] void fail(const pnpm_yaml::Node& at, std::string_view what, std::string_view todo) const;
    [[noreturn]] void fail_at(std::uint32_t line, std::uint32_t column, std::string_view what,
                              std::string_view todo) const;

    // Calls f(key node, value) for each entry of a mapping; null counts as an empty mapping.
    template <class F> void for_each_entry(const pnpm_yaml::Node& map, F&& f) const
    {
        if (map.is_null())
            return;
        if (!map.is_map())
            expected(map, "a mapping");
        for (std::uint32_t i = 0; i < map.count; i += 2) {
            const pnpm_yaml::Node& key = doc_.child(map, i);
            if (!key.is_scalar())
                expected(key, "a plain key");
            f(key, doc_.child(map, i + 1));
        }
    }
    // The same with the key's text.
    template <class F> void for_each(const pnpm_yaml::Node& map, F&& f) const
    {
        for_each_entry(map, [&](const pnpm_yaml::Node& key, const pnpm_yaml::Node& v) { f(key.text, v); });
    }

    const pnpm_yaml::Node* find(const pnpm_yaml::Node& map, std::string_view key) const;
    const std::string& string(const pnpm_yaml::Node& n) const;
    bool boolean(const pnpm_yaml::Node& n) const;
    std::size_t unsigned_number(const pnpm_yaml::Node& n) const;
    void strings(const pnpm_yaml::Node& seq, std::vector<std::string>& out) const;
    void string_map(const pnpm_yaml::Node& map, std::map<std::string, std::string, std::less<>>& out) const;
    // A flow-style text of any node with mapping keys sorted, for values kept only to be compared.
    std::string canonical(const pnpm_yaml::Node& n) const;

private:
    [[noreturn]] void expected(const pnpm_yaml::Node& n, std::string_view what) const;

    const pnpm_yaml::Doc& doc_;
    const std::string& file_;
};

}  // namespace qk::workspace::pnpm_read
