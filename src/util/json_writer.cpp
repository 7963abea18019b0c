#include "qk/util/json_writer.hpp"

#include <fmt/core.h>

#include "utf8.hpp"

namespace qk {

bool JsonWriter::valid_utf8(std::string_view s)
{
    for (std::size_t i = 0; i < s.size();) {
        std::size_t n = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : utf8::sequence(s, i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

void JsonWriter::escape(std::string& out, std::string_view s)
{
    out += '"';
    // Most strings (paths) need no escaping: copy each run of plain ASCII at once.
    auto plain = [](unsigned char c) { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\'; };
    for (std::size_t i = 0; i < s.size();) {
        std::size_t run = i;
        while (run < s.size() && plain(static_cast<unsigned char>(s[run])))
            run++;
        if (run > i) {
            out.append(s.data() + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            std::size_t n = utf8::sequence(s, i);
            if (n == 0) {
                out += "\\ufffd";
                i++;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
            continue;
        }
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20)
                out += fmt::format("\\u{:04x}", c);
            else
                out += static_cast<char>(c);
        }
        i++;
    }
    out += '"';
}

void JsonWriter::newline()
{
    if (indent_ <= 0)
        return;
    out_ += '\n';
    out_.append(has_items_.size() * static_cast<std::size_t>(indent_), ' ');
}

void JsonWriter::before_value()
{
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (!has_items_.empty()) {
        if (has_items_.back())
            out_ += ',';
        has_items_.back() = true;
        newline();
    }
}

JsonWriter& JsonWriter::begin_object()
{
    before_value();
    out_ += '{';
    has_items_.push_back(false);
    return *this;
}

JsonWriter& JsonWriter::close(char bracket)
{
    bool had = has_items_.back();
    has_items_.pop_back();
    if (had)
        newline();
    out_ += bracket;
    return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }

JsonWriter& JsonWriter::begin_array()
{
    before_value();
    out_ += '[';
    has_items_.push_back(false);
    return *this;
}

JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view k)
{
    before_value();
    escape(out_, k);
    out_ += indent_ > 0 ? ": " : ":";
    after_key_ = true;
    return *this;
}

JsonWriter& JsonWriter::value(std::string_view s)
{
    before_value();
    escape(out_, s);
    return *this;
}

JsonWriter& JsonWriter::value(std::int64_t n)
{
    before_value();
    out_ += std::to_string(n);
    return *this;
}

JsonWriter& JsonWriter::value(bool b)
{
    before_value();
    out_ += b ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null()
{
    before_value();
    out_ += "null";
    return *this;
}

JsonWriter& JsonWriter::strings(const std::vector<std::string>& items)
{
    begin_array();
    for (const auto& s : items)
        value(s);
    return end_array();
}

}  // namespace qk
