// json_edit (qk/workspace/json_edit.hpp): a parsed value found again in its text by line:column, its
// closing bracket by scanning past strings and comments, the insertion indented as its neighbours are.
#include "qk/workspace/json_edit.hpp"

#include <fmt/format.h>

#include "qk/util/json_writer.hpp"

namespace qk::workspace {

namespace {

// The byte offset of line:column (columns count code points, as the parser does).
Result<std::size_t> offset_of(std::string_view text, std::uint32_t line, std::uint32_t column)
{
    std::size_t pos = 0;
    for (std::uint32_t l = 1; l < line; ++l) {
        pos = text.find('\n', pos);
        if (pos == std::string_view::npos)
            return error(fmt::format("line {} is past the end of the text", line));
        ++pos;
    }
    for (std::uint32_t c = 1; c < column && pos < text.size(); ++c) {
        ++pos;
        while (pos < text.size() && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80)
            ++pos;  // a code point's continuation bytes
    }
    return pos;
}

// A container in the text: where its closing bracket is, and the last byte before it that is neither
// whitespace nor in a comment (the opening bracket itself when it holds nothing): where an insertion goes,
// so that one after `"x" // note` lands after the value, not in the comment.
struct Span {
    std::size_t close = 0, last = 0;
};

// The span of the container opened at `open`, past strings and comments.
Result<Span> span_of(std::string_view text, std::size_t open)
{
    int depth = 0;
    std::size_t last = open;
    for (std::size_t i = open; i < text.size(); ++i) {
        char c = text[i];
        if (c == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i)
                if (text[i] == '\\')
                    ++i;
            last = i;
        } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
            i = text.find('\n', i);
            if (i == std::string_view::npos)
                break;
        } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            i = text.find("*/", i + 2);
            if (i == std::string_view::npos)
                break;
            ++i;
        } else if (c == '[' || c == '{') {
            ++depth;
            last = i;
        } else if (c == ']' || c == '}') {
            if (--depth == 0)
                return Span{i, last};
            last = i;
        } else if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            last = i;
        }
    }
    return error("the value's closing bracket is missing");
}

// The whitespace that starts the line holding `pos`.
std::string indent_of(std::string_view text, std::size_t pos)
{
    std::size_t start = text.rfind('\n', pos == 0 ? 0 : pos - 1);
    start = start == std::string_view::npos ? 0 : start + 1;
    std::size_t end = start;
    while (end < text.size() && (text[end] == ' ' || text[end] == '\t'))
        ++end;
    return std::string(text.substr(start, end - start));
}

// The indentation one level deeper than `indent`, in the file's own unit (a tab, else two spaces).
std::string deeper(const std::string& indent)
{
    return indent + (indent.find('\t') != std::string::npos ? "\t" : "  ");
}

}  // namespace

std::string json_string(std::string_view s)
{
    std::string out;
    JsonWriter::escape(out, s);  // quotes included
    return out;
}

Result<std::string> replace_literal(std::string_view text, const Json& value, std::string_view replacement)
{
    if (!value.is_bool() && !value.is_null())
        return error("not true, false or null");
    const std::string_view literal = value.is_null() ? "null" : value.as_bool() ? "true" : "false";
    QK_TRY(at, offset_of(text, value.line(), value.column()));
    if (text.substr(*at, literal.size()) != literal)
        return error(fmt::format("no {} at line {} column {}", literal, value.line(), value.column()));
    return fmt::format("{}{}{}", text.substr(0, *at), replacement, text.substr(*at + literal.size()));
}

Result<std::string> append_to_array(std::string_view text, const Json& array, const std::vector<std::string>& items)
{
    if (!array.is_array())
        return error("not an array");
    if (items.empty())
        return std::string(text);
    QK_TRY(open, offset_of(text, array.line(), array.column()));
    if (*open >= text.size() || text[*open] != '[')
        return error(fmt::format("no '[' at line {} column {}", array.line(), array.column()));
    QK_TRY(span, span_of(text, *open));
    const std::size_t close = span->close, last = span->last;
    std::string out(text.substr(0, close));
    bool empty = last == *open;
    bool comma = text[last] == ',';  // a trailing comma, which the configuration files may hold
    bool multiline = text.substr(*open, close - *open).find('\n') != std::string_view::npos;
    std::string added;
    if (multiline) {
        std::string indent = empty ? deeper(indent_of(text, *open)) : indent_of(text, last);
        for (const std::string& item : items)
            added += (added.empty() && (empty || comma) ? "" : ",") + std::string("\n") + indent + item;
        if (comma)
            added += ",";
        out = std::string(text.substr(0, last + 1)) + added + std::string(text.substr(last + 1));
        return out;
    }
    for (const std::string& item : items)
        added += (added.empty() && (empty || comma) ? "" : ", ") + item;
    return std::string(text.substr(0, last + 1)) + (comma && !empty ? " " : "") + added +
           std::string(text.substr(last + 1));
}

Result<std::string> insert_member(std::string_view text, const Json& object, std::string_view key,
                                  std::string_view value, MemberPlace place)
{
    const std::string keys[] = {std::string(key)};
    return insert_nested_member(text, object, keys, value, place);
}

Result<std::string> insert_nested_member(std::string_view text, const Json& object, std::span<const std::string> keys,
                                         std::string_view value, MemberPlace place)
{
    if (!object.is_object())
        return error("not an object");
    if (keys.empty())
        return error("no member to add");
    QK_TRY(open, offset_of(text, object.line(), object.column()));
    if (*open >= text.size() || text[*open] != '{')
        return error(fmt::format("no '{{' at line {} column {}", object.line(), object.column()));
    QK_TRY(span, span_of(text, *open));
    const std::size_t close = span->close, last = span->last;
    bool empty = last == *open;
    bool multiline = text.substr(*open, close - *open).find('\n') != std::string_view::npos;
    std::string indent, unit;
    if (multiline) {
        std::size_t next = *open + 1;
        while (next < text.size() &&
               (text[next] == ' ' || text[next] == '\t' || text[next] == '\r' || text[next] == '\n'))
            ++next;
        const std::string outer = indent_of(text, *open);
        indent = empty ? deeper(outer) : indent_of(text, next);
        // The file's own step, as its members are indented from the object's line.
        unit = indent.size() > outer.size() && indent.starts_with(outer) ? indent.substr(outer.size())
                                                                         : deeper(std::string());
    }
    // key[0]: {key[1]: ... value}, an object a line per member where the object spans lines.
    std::string member = std::string(value);
    for (std::size_t k = keys.size(); k-- > 1;) {
        if (!multiline) {
            member = "{" + json_string(keys[k]) + ": " + member + "}";
            continue;
        }
        std::string at = indent;  // where the object holding keys[k] closes: its key's line
        for (std::size_t depth = 1; depth < k; ++depth)
            at += unit;
        member = "{\n" + at + unit + json_string(keys[k]) + ": " + member + "\n" + at + "}";
    }
    member = json_string(keys[0]) + ": " + member;
    if (place == MemberPlace::last && !empty) {
        // After the last member, on a line of its own past a comment on the member's line; a trailing
        // comma stays trailing.
        const bool comma = text[last] == ',';
        const std::string head(text.substr(0, last + 1));
        if (!multiline)
            return head + (comma ? " " : ", ") + member + std::string(text.substr(last + 1));
        std::size_t eol = text.find('\n', last);
        if (eol == std::string_view::npos || eol > close)
            eol = last + 1;  // the object closes on the member's line
        return head + (comma ? "" : ",") + std::string(text.substr(last + 1, eol - last - 1)) + "\n" + indent +
               member + (comma ? "," : "") + std::string(text.substr(eol));
    }
    std::string inserted;
    if (multiline) {
        inserted = "\n" + indent + member + (empty ? "" : ",");
    } else if (empty) {
        inserted = member;
    } else {
        // As the object spaces its braces: {"a": 1} becomes {"b": 2, "a": 1}, { "a": 1 } { "b": 2, "a": 1 }.
        inserted = text[*open + 1] == ' ' ? " " + member + "," : member + ", ";
    }
    return std::string(text.substr(0, *open + 1)) + inserted + std::string(text.substr(*open + 1));
}

}  // namespace qk::workspace
