#include "dotenv.hpp"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace qk::run {

namespace {

bool is_key_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
           c == '-';
}

bool is_blank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s)
{
    while (!s.empty() && (is_blank(s.front()) || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (is_blank(s.back()) || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

// The closing quote at or after `from`, skipping backslash-escaped ones; npos when there is none.
std::size_t closing_quote(std::string_view text, std::size_t from, char quote)
{
    for (std::size_t i = from; i < text.size(); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == quote)
            ++i;
        else if (text[i] == quote)
            return i;
    }
    return std::string_view::npos;
}

// A quoted value counts only when nothing but blanks or a comment follows it on its line, as in
// dotenv's pattern; otherwise the line is read as an unquoted value.
bool rest_of_line_is_empty(std::string_view text, std::size_t from)
{
    while (from < text.size() && (is_blank(text[from]) || text[from] == '\r'))
        ++from;
    return from >= text.size() || text[from] == '\n' || text[from] == '#';
}

void set(std::vector<DotenvEntry>& out, DotenvEntry entry)
{
    for (auto& e : out)
        if (e.name == entry.name) {
            e = std::move(entry);
            return;
        }
    out.push_back(std::move(entry));
}

}  // namespace

std::vector<DotenvEntry> parse_dotenv(std::string_view text)
{
    std::vector<DotenvEntry> out;
    std::size_t pos = 0;
    auto next_line = [&] {
        std::size_t nl = text.find('\n', pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
    };
    while (pos < text.size()) {
        std::size_t i = pos;
        while (i < text.size() && is_blank(text[i]))
            ++i;
        if (text.compare(i, 7, "export ") == 0 || text.compare(i, 7, "export\t") == 0) {
            i += 7;
            while (i < text.size() && is_blank(text[i]))
                ++i;
        }
        std::size_t key_start = i;
        while (i < text.size() && is_key_char(text[i]))
            ++i;
        std::string name(text.substr(key_start, i - key_start));
        while (i < text.size() && is_blank(text[i]))
            ++i;
        // dotenv also takes "KEY: value".
        bool assign = i < text.size() && (text[i] == '=' || (text[i] == ':' && i + 1 < text.size() &&
                                                              is_blank(text[i + 1])));
        if (name.empty() || !assign) {
            next_line();
            continue;
        }
        ++i;
        while (i < text.size() && is_blank(text[i]))
            ++i;
        DotenvEntry entry{std::move(name), {}, false};
        char q = i < text.size() ? text[i] : '\0';
        bool quoted = q == '\'' || q == '"' || q == '`';
        std::size_t close = quoted ? closing_quote(text, i + 1, q) : std::string_view::npos;
        if (close != std::string_view::npos && rest_of_line_is_empty(text, close + 1)) {
            std::string_view inner = text.substr(i + 1, close - i - 1);
            entry.literal = q == '\'';
            if (q == '"') {
                for (std::size_t k = 0; k < inner.size(); ++k) {
                    if (inner[k] == '\\' && k + 1 < inner.size() && (inner[k + 1] == 'n' || inner[k + 1] == 'r')) {
                        entry.value += inner[k + 1] == 'n' ? '\n' : '\r';
                        ++k;
                    } else {
                        entry.value += inner[k];
                    }
                }
            } else {
                entry.value = inner;
            }
            pos = close + 1;
        } else {
            std::size_t end = text.find_first_of("#\n", i);
            entry.value = trim(text.substr(i, end == std::string_view::npos ? std::string_view::npos : end - i));
            pos = i;
        }
        set(out, std::move(entry));
        next_line();
    }
    return out;
}

Result<std::vector<DotenvEntry>> read_dotenv(const std::filesystem::path& path, std::string_view display)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return sys_error(fmt::format("cannot read the env file {} (envFile); create it or fix the target's "
                                     "options.envFile",
                                     display));
    std::ostringstream text;
    text << in.rdbuf();
    return parse_dotenv(text.str());
}

std::string expand_dotenv_value(std::string_view value,
                                const std::function<std::optional<std::string>(std::string_view)>& lookup)
{
    std::string out;
    std::size_t i = 0;
    while (i < value.size()) {
        char c = value[i];
        if (c == '\\' && i + 1 < value.size() && value[i + 1] == '$') {
            out += '$';
            i += 2;
            continue;
        }
        if (c != '$' || i + 1 >= value.size()) {
            out += c;
            ++i;
            continue;
        }
        if (value[i + 1] == '{') {
            std::size_t close = value.find('}', i + 2);
            if (close == std::string_view::npos) {
                out += value.substr(i);
                break;
            }
            std::string_view body = value.substr(i + 2, close - i - 2);
            std::size_t op = body.find(":-");
            std::size_t op_len = 2;
            if (op == std::string_view::npos) {
                op = body.find('-');
                op_len = 1;
            }
            std::string_view name = op == std::string_view::npos ? body : body.substr(0, op);
            std::optional<std::string> v = lookup(name);
            if (op != std::string_view::npos && (!v || (op_len == 2 && v->empty())))
                out += expand_dotenv_value(body.substr(op + op_len), lookup);
            else if (v)
                out += *v;
            i = close + 1;
            continue;
        }
        std::size_t end = i + 1;
        while (end < value.size() && (is_key_char(value[end]) && value[end] != '.' && value[end] != '-'))
            ++end;
        if (end == i + 1) {
            out += c;
            ++i;
            continue;
        }
        if (std::optional<std::string> v = lookup(value.substr(i + 1, end - i - 1)))
            out += *v;
        i = end;
    }
    return out;
}

}  // namespace qk::run
