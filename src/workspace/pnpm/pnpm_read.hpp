// Typed reading of a pnpm_yaml::Doc with messages that say file:line:column, what was expected and what
// to do. The first mistake is kept as the Reader's failure(), which the parse_* functions return; from
// then on the loops visit nothing and an accessor that finds no value gives an empty one, so that a deep
// descent needs no check at every step, only where it would go wrong on what it read.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"
#include "pnpm_yaml.hpp"

namespace qk::workspace::pnpm_read {

class Reader {
public:
    Reader(const pnpm_yaml::Doc& doc, const std::string& file) : doc_(doc), file_(file) {}

    // Keeps the first mistake: later ones follow from it.
    void fail(const pnpm_yaml::Node& at, std::string_view what, std::string_view todo) const;
    void fail_at(std::uint32_t line, std::uint32_t column, std::string_view what, std::string_view todo) const;
    bool failed() const { return failure_.has_value(); }
    const std::optional<Error>& failure() const { return failure_; }

    // Calls f(key node, value) for each entry of a mapping; null counts as an empty mapping.
    template <class F> void for_each_entry(const pnpm_yaml::Node& map, F&& f) const
    {
        if (failed() || map.is_null())
            return;
        if (!map.is_map())
            return expected(map, "a mapping");
        for (std::uint32_t i = 0; i < map.count && !failed(); i += 2) {
            const pnpm_yaml::Node& key = doc_.child(map, i);
            if (!key.is_scalar())
                return expected(key, "a plain key");
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
    // A sequence of strings; with `null_is_none`, a null item is skipped rather than an error.
    void strings(const pnpm_yaml::Node& seq, std::vector<std::string>& out, bool null_is_none = false) const;
    // A package's cpu, os or libc as published: strings, where a null stands for none (pnpm 11 copies
    // `libc: [null]` from the registry's metadata into the lockfile).
    void platforms(const pnpm_yaml::Node& seq, std::vector<std::string>& out) const;
    void string_map(const pnpm_yaml::Node& map, std::map<std::string, std::string, std::less<>>& out) const;
    // A flow-style text of any node with mapping keys sorted, for values kept only to be compared.
    std::string canonical(const pnpm_yaml::Node& n) const;

private:
    void expected(const pnpm_yaml::Node& n, std::string_view what) const;

    const pnpm_yaml::Doc& doc_;
    const std::string& file_;
    mutable std::optional<Error> failure_;  // mutable: reading is const, and meets a mistake as it reads
};

}  // namespace qk::workspace::pnpm_read
