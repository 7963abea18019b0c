#include "strace_line.hpp"

#include <charconv>

#include <fmt/core.h>

#include "strace_names.hpp"

namespace qk::record::strace {
namespace {

constexpr auto npos = std::string_view::npos;

std::string_view trim(std::string_view s)
{
    while (!s.empty() && s.front() == ' ')
        s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ')
        s.remove_suffix(1);
    return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
int hex_value(char c)
{
    if (is_digit(c))
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

// Decodes strace's escapes from s[i] up to the unescaped `term`; returns the index just past it,
// or npos when the text ends first or holds an escape strace does not write.
size_t unescape(std::string_view s, size_t i, char term, std::string& out)
{
    while (i < s.size()) {
        char c = s[i++];
        if (c == term)
            return i;
        if (c != '\\') {
            out += c;
            continue;
        }
        if (i >= s.size())
            return npos;
        char e = s[i++];
        switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case 'v': out += '\v'; break;
        case 'f': out += '\f'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case '"':
        case '\\':
        case '\'': out += e; break;
        case 'x': {
            int value = 0, digits = 0;
            for (; digits < 2 && i < s.size() && hex_value(s[i]) >= 0; digits++)
                value = value * 16 + hex_value(s[i++]);
            if (digits == 0)
                return npos;
            out += static_cast<char>(value);
            break;
        }
        default: {
            if (!is_octal(e))
                return npos;
            int value = e - '0';
            for (int digits = 1; digits < 3 && i < s.size() && is_octal(s[i]); digits++)
                value = value * 8 + (s[i++] - '0');
            if (value > 0377)
                return npos;
            out += static_cast<char>(value);
        }
        }
    }
    return npos;
}

// Walks a bracketed list from s[i] (just inside the opening bracket) to the bracket `close` that ends
// it at depth 0, or to the end of `s` when close is 0, collecting the top-level items. Quoted strings
// and fd annotations are skipped whole: commas and brackets inside them do not count. Returns the
// index of the closing bracket (or s.size()), npos when unbalanced.
size_t scan_list(std::string_view s, size_t i, char close, std::vector<std::string_view>& items)
{
    size_t start = i;
    int depth = 0;
    auto push = [&](size_t end) { items.push_back(trim(s.substr(start, end - start))); };
    while (i < s.size()) {
        char c = s[i];
        if (c == '"' || c == '<') {
            char end = c == '"' ? '"' : '>';
            for (i++; i < s.size() && s[i] != end; i++)
                if (s[i] == '\\')
                    i++;
            if (i >= s.size())
                return npos;
        } else if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']' || c == '}') {
            if (depth == 0) {
                if (c != close)
                    return npos;
                push(i);
                break;
            }
            depth--;
        } else if (c == ',' && depth == 0) {
            push(i);
            start = i + 1;
        }
        i++;
    }
    if (i >= s.size() && (close != 0 || depth != 0))
        return npos;
    if (close == 0)
        push(i);
    if (items.size() == 1 && items.front().empty())
        items.clear();
    return i;
}

template <class T>
bool parse_number(std::string_view s, T& out)
{
    int base = 10;
    if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s.remove_prefix(2);
    } else if (s.size() > 1 && s[0] == '0') {
        base = 8;
        s.remove_prefix(1);
    }
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

// The -y annotation from s[i] == '<': its path, " (deleted)" (older strace, inside) or "(deleted)"
// (strace >= 5.x, after it) removed. Returns the index past it, or npos.
size_t take_annotation(std::string_view s, size_t i, std::string& path, bool& deleted)
{
    i = unescape(s, i + 1, '>', path);
    if (i == npos)
        return npos;
    constexpr std::string_view kInside = " (deleted)", kAfter = "(deleted)";
    if (path.ends_with(kInside)) {
        path.resize(path.size() - kInside.size());
        deleted = true;
    }
    if (s.substr(i).starts_with(kAfter)) {
        i += kAfter.size();
        deleted = true;
    }
    return i;
}

Error bad(std::string_view what, std::string_view text)
{
    return error(fmt::format("{} '{}'", what, text.substr(0, 160)));
}

}  // namespace

Prefixed split_pid_prefix(std::string_view line)
{
    std::string_view s = line;
    bool bracket = s.starts_with("[pid ");
    if (bracket)
        s = trim(s.substr(5));
    size_t digits = 0;
    while (digits < s.size() && is_digit(s[digits]))
        digits++;
    pid_t pid = 0;
    if (digits == 0 || !parse_number(s.substr(0, digits), pid) || pid <= 0)
        return {0, line};
    s.remove_prefix(digits);
    if (bracket) {
        if (!s.starts_with("]"))
            return {0, line};
        s.remove_prefix(1);
    } else if (!s.starts_with(" ")) {
        return {0, line};
    }
    return {pid, trim(s)};
}

std::string_view call_name(std::string_view text)
{
    size_t n = 0;
    while (n < text.size() && (text[n] == '_' || is_digit(text[n]) || (text[n] >= 'a' && text[n] <= 'z') ||
                               (text[n] >= 'A' && text[n] <= 'Z')))
        n++;
    if (n == 0 || n >= text.size() || text[n] != '(')
        return {};
    return text.substr(0, n);
}

Result<Quoted> parse_quoted(std::string_view text)
{
    text = trim(text);
    Quoted q;
    size_t end = text.starts_with('"') ? unescape(text, 1, '"', q.bytes) : npos;
    if (end == npos)
        return bad("not a quoted string:", text);
    std::string_view rest = text.substr(end);
    if (rest == "...")
        q.truncated = true;
    else if (!rest.empty())
        return bad("unexpected text after a quoted string:", text);
    return q;
}

Result<FdArg> parse_fd(std::string_view text)
{
    text = trim(text);
    FdArg fd;
    size_t i = 0;
    if (text.starts_with("AT_FDCWD")) {
        fd.fd = kAtFdcwd;
        i = 8;
    } else {
        i = text.starts_with('-') ? 1 : 0;
        while (i < text.size() && is_digit(text[i]))
            i++;
        if (!parse_number(text.substr(0, i), fd.fd))
            return bad("not a file descriptor:", text);
    }
    if (i < text.size() && text[i] == '<') {
        std::string path;
        i = take_annotation(text, i, path, fd.deleted);
        if (i == npos)
            return bad("unterminated file descriptor path:", text);
        fd.path = std::move(path);
    }
    if (i != text.size())
        return bad("not a file descriptor:", text);
    return fd;
}

Result<Call> parse_call(std::string_view text)
{
    Call call;
    call.name = call_name(text);
    if (call.name.empty())
        return bad("not a system call:", text);
    size_t close = scan_list(text, call.name.size() + 1, ')', call.args);
    if (close == npos)
        return bad("unbalanced quotes or brackets in", text);
    std::string_view rest = trim(text.substr(close + 1));
    if (!rest.starts_with('='))
        return bad("no return value in", text);
    call.result = trim(rest.substr(1));
    return call;
}

Status need_args(const Call& call, std::size_t n)
{
    if (call.args.size() < n)
        return error(fmt::format("{} with {} arguments, {} expected", call.name, call.args.size(), n));
    return {};
}

Result<Return> parse_return(std::string_view text)
{
    text = trim(text);
    Return r;
    if (text.starts_with('?'))
        return r;
    size_t i = text.starts_with('-') ? 1 : 0;
    if (text.substr(i).starts_with("0x"))
        i += 2;
    while (i < text.size() && hex_value(text[i]) >= 0)
        i++;
    if (!parse_number(text.substr(0, i), r.value))
        return bad("not a return value:", text);
    r.known = true;
    if (i < text.size() && text[i] == '<') {
        std::string path;
        i = take_annotation(text, i, path, r.deleted);
        if (i == npos)
            return bad("unterminated file descriptor path in the return value", text);
        r.path = std::move(path);
    }
    std::string_view rest = trim(text.substr(i));
    // "2 /* 14734 in strace's PID NS */" (--pidns-translation): a pid as a task in a PID namespace of
    // its own sees it, then as strace sees it, which is how every line names the task. The latter.
    constexpr std::string_view kTranslated = " in strace's PID NS */";
    if (r.value > 0 && rest.starts_with("/* ") && rest.ends_with(kTranslated)) {
        std::string_view pid = rest.substr(3, rest.size() - 3 - kTranslated.size());
        if (!parse_number(pid, r.value) || r.value <= 0)
            return bad("not a pid in strace's PID namespace:", text);
        return r;
    }
    if (r.value < 0 && !rest.empty()) {
        // "-1 ENOENT (No such file or directory)"; "-1 (errno 1234)" past strace's table.
        if (rest.starts_with("(errno ")) {
            auto close = rest.find(')');
            if (close == npos)
                return bad("unterminated error code in the return value", text);
            std::string_view digits = rest.substr(7, close - 7);
            unsigned long long err = 0;
            // A process killed in the call can leave strace a garbage code: its outcome is unknown.
            if (!parse_number(digits, err) || err == 0 || err > 4095)
                return Return{};
            r.value = -static_cast<long>(err);
            return r;
        }
        std::string_view code = rest.substr(0, rest.find(' '));
        int err = 0;
        if (auto named = errno_number(code))
            err = *named;
        else if (!parse_number(code, err) || err <= 0)
            return bad("unknown error code in the return value", text);
        r.value = -err;
    }
    return r;
}

Result<std::uint64_t> parse_flags(std::string_view text, NameLookup lookup)
{
    text = trim(text);
    std::uint64_t flags = 0;
    while (true) {
        size_t bar = text.find('|');
        std::string_view token = trim(text.substr(0, bar));
        std::uint64_t value = 0;
        if (token.empty())
            return bad("empty flag in", text);
        if (is_digit(token.front())) {
            if (!parse_number(token, value))
                return bad("not a number:", token);
        } else if (auto named = lookup(token)) {
            value = *named;
        } else {
            return bad("unknown flag", token);
        }
        flags |= value;
        if (bar == npos)
            return flags;
        text.remove_prefix(bar + 1);
    }
}

Result<std::vector<std::string>> parse_string_array(std::string_view text)
{
    text = trim(text);
    std::vector<std::string> out;
    if (text == "NULL" || text.starts_with("0x"))
        return out;
    std::vector<std::string_view> items;
    if (!text.starts_with('[') || scan_list(text, 1, ']', items) != text.size() - 1)
        return bad("not an array of strings:", text);
    for (size_t k = 0; k < items.size(); k++) {
        if (items[k] == "..." && k + 1 == items.size())
            break;
        QK_TRY(q, parse_quoted(items[k]));
        out.push_back(std::move(q->bytes));
    }
    return out;
}

std::optional<std::string_view> keyed_arg(const std::vector<std::string_view>& args, std::string_view key)
{
    for (auto a : args)
        if (a.size() > key.size() && a.starts_with(key) && a[key.size()] == '=')
            return trim(a.substr(key.size() + 1));
    return std::nullopt;
}

std::optional<std::string_view> struct_field(std::string_view text, std::string_view key)
{
    text = trim(text);
    std::vector<std::string_view> items;
    if (!text.starts_with('{') || scan_list(text, 1, '}', items) == npos)
        return std::nullopt;
    return keyed_arg(items, key);
}

}  // namespace qk::record::strace
