// pnpm's packageExtensions spliced into pnpm-workspace.yaml or package.json (package_extensions.hpp). The
// YAML is placed by libyaml's marks on a parsed tree, and the text after the edit is parsed again and must
// hold what was added: a half-made edit is never written.
#include "qk/workspace/package_extensions.hpp"

#include <algorithm>
#include <array>
#include <vector>

#include <fmt/format.h>

#include "pnpm_yaml.hpp"
#include "qk/workspace/json_edit.hpp"

namespace qk::workspace {
namespace {

using pnpm_yaml::Doc;
using pnpm_yaml::Node;

std::string yaml_quoted(std::string_view s)
{
    std::string out = "'";
    for (char c : s)
        out += c == '\'' ? std::string("''") : std::string(1, c);
    return out + "'";
}

const Node* member(const Doc& doc, const Node& map, std::string_view key)
{
    for (std::uint32_t i = 0; i + 1 < map.count; i += 2)
        if (doc.child(map, i).is_scalar() && doc.child(map, i).text == key)
            return &doc.child(map, i + 1);
    return nullptr;
}

// The offset in `text` where 1-based line `line` starts (text.size() past the last line).
std::size_t line_start(std::string_view text, std::uint32_t line)
{
    std::size_t at = 0;
    for (std::uint32_t l = 1; l < line && at < text.size(); ++l) {
        std::size_t nl = text.find('\n', at);
        at = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    return at;
}

class YamlSplice {
public:
    YamlSplice(std::string_view text, const Doc& doc) : text_(text)
    {
        for (const Node& n : doc.nodes)
            if (n.is_map())
                for (std::uint32_t i = 0; i < n.count; i += 2)
                    keys_.push_back({doc.child(n, i).line, doc.child(n, i).column});
        std::sort(keys_.begin(), keys_.end());
    }

    // `block` (indented `column - 1` spaces, lines ending in '\n') inserted after the last line of the
    // block map whose keys sit at `column` and whose first key is on `first_line`: before the next key
    // less indented, with the blank and comment lines before that key left to it.
    std::string after_map(std::uint32_t first_line, std::uint32_t column, const std::string& block) const
    {
        std::uint32_t next = 0;  // the line of the next key less indented, 0: none
        for (const auto& [line, col] : keys_)
            if (line > first_line && col < column) {
                next = line;
                break;
            }
        std::size_t end = next ? line_start(text_, next) : text_.size();
        // Back over blank and comment lines, which belong to what follows.
        while (end > 0) {
            const std::size_t stop = text_[end - 1] == '\n' ? end - 1 : end;  // the line before `end`
            const std::size_t nl = stop == 0 ? std::string_view::npos : text_.rfind('\n', stop - 1);
            const std::size_t start = nl == std::string_view::npos ? 0 : nl + 1;
            const std::string_view line = text_.substr(start, stop - start);
            const std::size_t content = line.find_first_not_of(" \t\r");
            if (content != std::string_view::npos && line[content] != '#')
                break;
            end = start;
        }
        std::string out(text_.substr(0, end));
        if (!out.empty() && out.back() != '\n')
            out += '\n';
        return out + block + std::string(text_.substr(end));
    }

private:
    std::string_view text_;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> keys_;  // every map key's (line, column)
};

bool block_map(std::string_view text, const Node& n)
{
    if (!n.is_map())
        return false;
    const std::size_t at = line_start(text, n.line) + n.column - 1;
    return at < text.size() && text[at] != '{';
}

Result<Doc> parse_one(std::string_view text)
{
    QK_TRY(docs, pnpm_yaml::parse(text, "pnpm-workspace.yaml", "fix it: pnpm reads the same file"));
    if (docs->empty())
        return Doc{};
    return std::move(docs->front());
}

bool holds(const Doc& doc, const PackageExtension& e)
{
    if (doc.nodes.empty() || !doc.root_node().is_map())
        return false;
    const Node* all = member(doc, doc.root_node(), "packageExtensions");
    const Node* entry = all && all->is_map() ? member(doc, *all, e.importer) : nullptr;
    const Node* deps = entry && entry->is_map() ? member(doc, *entry, "dependencies") : nullptr;
    return deps && deps->is_map() && member(doc, *deps, e.name) != nullptr;
}

}  // namespace

Result<std::string> add_package_extension_yaml(std::string_view text, const PackageExtension& e)
{
    QK_TRY(parsed, parse_one(text));
    const Doc& doc = *parsed;
    if (holds(doc, e))
        return std::string(text);
    const std::string dep = fmt::format("{}: {}\n", yaml_quoted(e.name), yaml_quoted(e.version));
    auto pad = [](std::uint32_t column) { return std::string(column - 1, ' '); };
    auto refuse = [&](const Node& n, std::string_view what) {
        return error(fmt::format("pnpm-workspace.yaml:{}:{}: {} is not a block map to add to", n.line, n.column, what));
    };
    std::string edited;
    const Node* root = doc.nodes.empty() ? nullptr : &doc.root_node();
    if (root && !root->is_null() && !block_map(text, *root))
        return refuse(*root, "the file");
    const Node* all = root && root->is_map() ? member(doc, *root, "packageExtensions") : nullptr;
    YamlSplice splice(text, doc);
    if (!all) {
        std::string out(text);
        if (!out.empty() && out.back() != '\n')
            out += '\n';
        edited = out + fmt::format("\npackageExtensions:\n  {}:\n    dependencies:\n      {}", yaml_quoted(e.importer), dep);
    } else if (all->is_null()) {
        return error(fmt::format("pnpm-workspace.yaml:{}: packageExtensions holds nothing yet; add the entry by hand",
                                 all->line));
    } else if (!block_map(text, *all)) {
        return refuse(*all, "packageExtensions");
    } else {
        const std::uint32_t indent = doc.child(*all, 0).column;
        const Node* entry = member(doc, *all, e.importer);
        if (!entry) {
            const std::string step(indent - 1, ' ');
            edited = splice.after_map(all->line, indent,
                                      fmt::format("{}{}:\n{}{}dependencies:\n{}{}{}{}", pad(indent), yaml_quoted(e.importer),
                                                  pad(indent), step, pad(indent), step, step, dep));
        } else if (!block_map(text, *entry)) {
            return refuse(*entry, e.importer);
        } else {
            const std::uint32_t inner = doc.child(*entry, 0).column;
            const Node* deps = member(doc, *entry, "dependencies");
            if (!deps) {
                const std::string step(inner - indent, ' ');
                edited = splice.after_map(entry->line, inner,
                                          fmt::format("{}dependencies:\n{}{}{}", pad(inner), pad(inner), step, dep));
            } else if (!block_map(text, *deps)) {
                return refuse(*deps, e.importer + ".dependencies");
            } else {
                edited = splice.after_map(deps->line, doc.child(*deps, 0).column,
                                          pad(doc.child(*deps, 0).column) + dep);
            }
        }
    }
    auto again = parse_one(edited);
    if (!again || !holds(*again, e))
        return error(fmt::format("pnpm-workspace.yaml: adding {} to packageExtensions {} would not leave the file "
                                 "as pnpm reads it; add it by hand",
                                 e.name, e.importer));
    return edited;
}

Result<std::string> add_package_extension_json(std::string_view text, const PackageExtension& e)
{
    QK_TRY(parsed, parse_json(text, "package.json", TrailingCommas::allow));
    const Json& doc = *parsed;
    if (!doc.is_object())
        return error("package.json: not an object");
    const std::array<std::string, 5> path{"pnpm", "packageExtensions", e.importer, "dependencies", e.name};
    const Json* object = &doc;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
        const Json* next = object->find(path[i]);
        if (!next)
            return insert_nested_member(text, *object, std::span(path).subspan(i), json_string(e.version),
                                        object == &doc ? MemberPlace::last : MemberPlace::first);
        if (!next->is_object())
            return error(fmt::format("package.json:{}:{}: {} is not an object to add {} to", next->line(),
                                     next->column(), path[i], e.name));
        object = next;
    }
    if (object->find(e.name))
        return std::string(text);
    return insert_member(text, *object, e.name, json_string(e.version), MemberPlace::last);
}

}  // namespace qk::workspace
