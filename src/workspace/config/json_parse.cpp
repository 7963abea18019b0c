// The configuration JSON reader: JSON with comments, as Nx reads nx.json, project.json and package.json
// (nx/src/utils/json.ts parseJson: JSON.parse, else jsonc-parser with comments and trailing commas
// allowed; a comma alone, `[,]`, or two in a row stay errors there and here). simdjson cannot read
// comments and gives no position for many errors, and a message must say file:line:column and what was
// expected, so this is a small recursive-descent parser. Columns count characters (UTF-8 code points),
// from 1.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "qk/util/io.hpp"
#include "qk/util/unique_fd.hpp"
#include "qk/workspace/json.hpp"

namespace qk::workspace {
namespace {

constexpr int kMaxDepth = 512;

class Parser {
public:
    Parser(std::string_view text, std::string_view file, TrailingCommas commas)
        : s_(text), file_(file), commas_(commas)
    {
        if (s_.substr(0, 3) == "\xEF\xBB\xBF") {
            pos_ = col_pos_ = 3;
        }
    }

    Result<Json> parse_document()
    {
        if (!skip_space())
            return fail();
        Json value;
        if (!parse_value(value, 0))
            return fail();
        if (!skip_space())
            return fail();
        if (pos_ < s_.size()) {
            error("expected the end of the file after the JSON value");
            return fail();
        }
        return value;
    }

private:
    std::string_view s_;
    std::string_view file_;
    TrailingCommas commas_;
    std::size_t pos_ = 0;
    std::uint32_t line_ = 1;
    std::size_t col_pos_ = 0;  // the offset `col_` was counted to
    std::uint32_t col_ = 1;
    std::string message_;

    Error fail() const { return error_at_message(); }
    Error error_at_message() const { return Error{message_, 0}; }

    // Column of pos_, counted forward from the last position asked for (the parser only advances).
    std::uint32_t column()
    {
        if (pos_ < col_pos_) {  // moved back to report an error: count again from the line's start
            std::size_t start = s_.rfind('\n', pos_ == 0 ? 0 : pos_ - 1);
            col_pos_ = (start == std::string_view::npos || start >= pos_) ? 0 : start + 1;
            col_ = 1;
        }
        for (; col_pos_ < pos_; ++col_pos_) {
            if ((static_cast<unsigned char>(s_[col_pos_]) & 0xC0) != 0x80)
                ++col_;
        }
        return col_;
    }

    void newline_at(std::size_t i)  // s_[i] is '\n'
    {
        ++line_;
        col_pos_ = i + 1;
        col_ = 1;
    }

    std::string found() const
    {
        if (pos_ >= s_.size())
            return "the end of the file";
        char c = s_[pos_];
        if (c == '"')
            return "a string";
        if (c == '-' || (c >= '0' && c <= '9'))
            return "a number";
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$') {
            std::size_t e = pos_;
            while (e < s_.size() && e - pos_ < 24 &&
                   ((s_[e] >= 'a' && s_[e] <= 'z') || (s_[e] >= 'A' && s_[e] <= 'Z') ||
                    (s_[e] >= '0' && s_[e] <= '9') || s_[e] == '_' || s_[e] == '$'))
                ++e;
            return fmt::format("'{}'", s_.substr(pos_, e - pos_));
        }
        if (static_cast<unsigned char>(c) < 0x20)
            return fmt::format("the control character 0x{:02x}", static_cast<unsigned char>(c));
        if (static_cast<unsigned char>(c) >= 0x80)
            return "a non-ASCII character";
        return fmt::format("'{}'", c);
    }

    // Records "<file>:<line>:<col>: malformed JSON: <what>" at the current position; returns false.
    bool error(std::string_view what, bool with_found = false)
    {
        std::uint32_t col = column();
        message_ = fmt::format("{}:{}:{}: malformed JSON: {}{}", file_, line_, col, what,
                               with_found ? ", found " + found() : std::string());
        return false;
    }

    // Whitespace and comments. False on an unterminated block comment.
    bool skip_space()
    {
        while (pos_ < s_.size()) {
            char c = s_[pos_];
            if (c == '\n') {
                newline_at(pos_);
                ++pos_;
            } else if (c == ' ' || c == '\t' || c == '\r') {
                ++pos_;
            } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/') {
                while (pos_ < s_.size() && s_[pos_] != '\n')
                    ++pos_;
            } else if (c == '/' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '*') {
                std::size_t start = pos_;
                std::uint32_t start_line = line_;
                pos_ += 2;
                while (pos_ + 1 < s_.size() && !(s_[pos_] == '*' && s_[pos_ + 1] == '/')) {
                    if (s_[pos_] == '\n')
                        newline_at(pos_);
                    ++pos_;
                }
                if (pos_ + 1 >= s_.size()) {
                    pos_ = start;  // report where the comment opened
                    line_ = start_line;
                    return error("unterminated /* comment");
                }
                pos_ += 2;
            } else {
                break;
            }
        }
        return true;
    }

    bool parse_value(Json& out, int depth)
    {
        if (depth > kMaxDepth)
            return error("values nested more than 512 deep");
        std::uint32_t line = line_, col = column();
        if (pos_ >= s_.size())
            return error("expected a value", true);
        char c = s_[pos_];
        bool ok;
        if (c == '{') {
            ok = parse_object(out, depth);
        } else if (c == '[') {
            ok = parse_array(out, depth);
        } else if (c == '"') {
            std::string str;
            ok = parse_string(str);
            if (ok)
                out = Json::string(std::move(str));
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            ok = parse_number(out);
        } else if (s_.substr(pos_, 4) == "true" && !ident_char(pos_ + 4)) {
            pos_ += 4;
            out = Json::boolean(true);
            ok = true;
        } else if (s_.substr(pos_, 5) == "false" && !ident_char(pos_ + 5)) {
            pos_ += 5;
            out = Json::boolean(false);
            ok = true;
        } else if (s_.substr(pos_, 4) == "null" && !ident_char(pos_ + 4)) {
            pos_ += 4;
            out = Json();
            ok = true;
        } else {
            return error("expected a value (an object, array, string, number, true, false or null)", true);
        }
        if (ok)
            out.set_position(line, col);
        return ok;
    }

    bool ident_char(std::size_t i) const
    {
        if (i >= s_.size())
            return false;
        char c = s_[i];
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
    }

    bool parse_object(Json& out, int depth)
    {
        ++pos_;  // {
        Json::Object members;
        if (!skip_space())
            return false;
        if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            out = Json::object(std::move(members));
            return true;
        }
        for (;;) {
            if (!members.empty() && commas_ == TrailingCommas::allow && pos_ < s_.size() && s_[pos_] == '}') {
                ++pos_;
                out = Json::object(std::move(members));
                return true;
            }
            if (pos_ >= s_.size() || s_[pos_] != '"') {
                if (members.empty())
                    return error("expected a property name in double quotes or '}'", true);
                return error(commas_ == TrailingCommas::allow
                                 ? "expected a property name in double quotes or '}' after ','"
                                 : "expected a property name in double quotes after ',' (trailing commas are not "
                                   "allowed)",
                             true);
            }
            std::string key;
            if (!parse_string(key) || !skip_space())
                return false;
            if (pos_ >= s_.size() || s_[pos_] != ':')
                return error(fmt::format("expected ':' after the property name \"{}\"", key), true);
            ++pos_;
            if (!skip_space())
                return false;
            Json value;
            if (!parse_value(value, depth + 1) || !skip_space())
                return false;
            // JSON.parse keeps a repeated key where it first appeared, with the last value.
            auto same = std::find_if(members.begin(), members.end(), [&key](const auto& m) { return m.first == key; });
            if (same != members.end())
                same->second = std::move(value);
            else
                members.emplace_back(std::move(key), std::move(value));
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                if (!skip_space())
                    return false;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == '}') {
                ++pos_;
                out = Json::object(std::move(members));
                return true;
            }
            return error("expected ',' or '}' after a property value", true);
        }
    }

    bool parse_array(Json& out, int depth)
    {
        ++pos_;  // [
        Json::Array items;
        if (!skip_space())
            return false;
        if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            out = Json::array(std::move(items));
            return true;
        }
        for (;;) {
            if (pos_ < s_.size() && s_[pos_] == ']') {
                if (commas_ == TrailingCommas::refuse)
                    return error("expected a value after ',' (trailing commas are not allowed)", true);
                ++pos_;
                out = Json::array(std::move(items));
                return true;
            }
            Json value;
            if (!parse_value(value, depth + 1) || !skip_space())
                return false;
            items.push_back(std::move(value));
            if (pos_ < s_.size() && s_[pos_] == ',') {
                ++pos_;
                if (!skip_space())
                    return false;
                continue;
            }
            if (pos_ < s_.size() && s_[pos_] == ']') {
                ++pos_;
                out = Json::array(std::move(items));
                return true;
            }
            return error("expected ',' or ']' after an array element", true);
        }
    }

    static void append_utf8(std::string& out, std::uint32_t cp)
    {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    bool read_hex4(std::uint32_t& cp)
    {
        if (pos_ + 4 > s_.size())
            return false;
        cp = 0;
        for (int i = 0; i < 4; ++i) {
            char h = s_[pos_ + i];
            cp <<= 4;
            if (h >= '0' && h <= '9')
                cp |= h - '0';
            else if (h >= 'a' && h <= 'f')
                cp |= h - 'a' + 10;
            else if (h >= 'A' && h <= 'F')
                cp |= h - 'A' + 10;
            else
                return false;
        }
        pos_ += 4;
        return true;
    }

    bool parse_string(std::string& out)
    {
        std::size_t open = pos_;
        std::uint32_t open_line = line_;
        ++pos_;
        for (;;) {
            if (pos_ >= s_.size()) {
                pos_ = open;
                line_ = open_line;
                return error("unterminated string (a '\"' is missing)");
            }
            char c = s_[pos_];
            if (c == '"') {
                ++pos_;
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                return error(c == '\n' ? "unterminated string (a '\"' is missing before the end of the line)"
                                       : "a control character in a string must be escaped");
            if (c != '\\') {
                out += c;
                ++pos_;
                continue;
            }
            ++pos_;
            if (pos_ >= s_.size())
                continue;  // reported as unterminated above
            char e = s_[pos_++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                std::uint32_t cp;
                if (!read_hex4(cp)) {
                    pos_ -= 2;
                    return error("expected four hex digits after \\u");
                }
                if (cp >= 0xD800 && cp <= 0xDBFF && s_.substr(pos_, 2) == "\\u") {
                    std::size_t save = pos_;
                    pos_ += 2;
                    std::uint32_t lo;
                    if (read_hex4(lo) && lo >= 0xDC00 && lo <= 0xDFFF)
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    else
                        pos_ = save;
                }
                append_utf8(out, cp);
                break;
            }
            default:
                pos_ -= 2;
                return error(fmt::format("invalid escape sequence '\\{}' in a string", e));
            }
        }
    }

    bool parse_number(Json& out)
    {
        std::size_t start = pos_;
        if (s_[pos_] == '-')
            ++pos_;
        auto digits = [&] {
            std::size_t b = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
                ++pos_;
            return pos_ - b;
        };
        std::size_t int_start = pos_;
        std::size_t n = digits();
        if (n == 0)
            return error("expected a digit after '-'", true);
        if (n > 1 && s_[int_start] == '0') {
            pos_ = int_start;
            return error("a number cannot start with 0 (leading zeros are not allowed)");
        }
        if (pos_ < s_.size() && s_[pos_] == '.') {
            ++pos_;
            if (digits() == 0)
                return error("expected a digit after the decimal point", true);
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-'))
                ++pos_;
            if (digits() == 0)
                return error("expected a digit in the exponent", true);
        }
        double d = 0;
        auto [ptr, ec] = std::from_chars(s_.data() + start, s_.data() + pos_, d);
        if (ec == std::errc::result_out_of_range)
            d = s_[start] == '-' ? -HUGE_VAL : HUGE_VAL;
        (void)ptr;
        out = Json::number(d);
        return true;
    }
};

}  // namespace

Result<Json> parse_json(std::string_view text, std::string_view file, TrailingCommas commas)
{
    return Parser(text, file, commas).parse_document();
}

Result<Json> read_json_file(const std::filesystem::path& path, std::string_view display)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!fd.valid())
        return sys_error(fmt::format("{}: cannot read", display));
    // At most one byte past the limit is read, whatever the file claims or does while it is read.
    std::string text;
    std::size_t have = 0;
    for (;;) {
        if (have == text.size()) {
            if (have > kMaxConfigFileBytes)
                break;
            text.resize(std::min(std::max<std::size_t>(2 * have, std::size_t{64} << 10), kMaxConfigFileBytes + 1));
        }
        const ssize_t n = retry_eintr([&] { return ::read(fd.get(), text.data() + have, text.size() - have); });
        if (n < 0)
            return sys_error(fmt::format("{}: cannot read", display));
        if (n == 0)
            break;
        have += static_cast<std::size_t>(n);
    }
    if (have > kMaxConfigFileBytes) {
        struct stat st {};
        const bool sized = ::fstat(fd.get(), &st) == 0 && static_cast<std::size_t>(st.st_size) > kMaxConfigFileBytes;
        return error(fmt::format("{}: {} is more than qk reads of a configuration file ({} MiB; parsed, a file takes "
                                 "many times its size in memory); one this large was most likely generated or "
                                 "damaged by mistake: keep in it only what configures the workspace",
                                 display, sized ? fmt::format("{:.0f} MiB", static_cast<double>(st.st_size) / (1 << 20)) : "it",
                                 kMaxConfigFileBytes >> 20));
    }
    text.resize(have);
    return parse_json(text, display, TrailingCommas::allow);
}

}  // namespace qk::workspace
