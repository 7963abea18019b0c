// JsonWriter: a streaming JSON writer that escapes strings per RFC 8259. Bytes that are not valid
// UTF-8 (a path may hold any byte) are written as U+FFFD, so the output is always valid JSON.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qk {

class JsonWriter {
public:
    explicit JsonWriter(int indent = 2) : indent_(indent) {}

    JsonWriter& begin_object();
    JsonWriter& end_object();
    JsonWriter& begin_array();
    JsonWriter& end_array();
    JsonWriter& key(std::string_view k);
    JsonWriter& value(std::string_view s);
    JsonWriter& value(const char* s) { return value(std::string_view(s)); }
    JsonWriter& value(std::int64_t n);
    JsonWriter& value(int n) { return value(static_cast<std::int64_t>(n)); }
    JsonWriter& value(bool b);
    JsonWriter& null();
    // An array of strings in one call.
    JsonWriter& strings(const std::vector<std::string>& items);

    const std::string& str() const { return out_; }
    // Room for a document of about `bytes`, when the caller can tell: a large one then grows in place.
    void reserve(std::size_t bytes) { out_.reserve(bytes); }
    // The document with a final newline, moved out: a large report is not copied.
    std::string take_line() &&
    {
        out_ += '\n';
        return std::move(out_);
    }

    // Appends `s` as a JSON string literal, quotes included.
    static void escape(std::string& out, std::string_view s);
    // Whether `s` is valid UTF-8 (no overlongs, surrogates or code points past U+10FFFF): where a
    // replacement character would change a value (a path to restore), check before escaping.
    static bool valid_utf8(std::string_view s);

private:
    void before_value();
    JsonWriter& close(char bracket);
    void newline();

    std::string out_;
    int indent_;
    // Per open container: whether it has an element yet.
    std::vector<bool> has_items_;
    bool after_key_ = false;
};

}  // namespace qk
