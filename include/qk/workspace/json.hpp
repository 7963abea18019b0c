// Json: a configuration value as read, objects keeping their members in file order (Nx's merges and
// targetDefaults' glob keys depend on it), every value remembering where it started in its file; and
// the JSONC reader Nx's configuration files need.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::workspace {

class Json {
public:
    enum class Kind : std::uint8_t { null, boolean, number, string, array, object };
    using Array = std::vector<Json>;
    using Object = std::vector<std::pair<std::string, Json>>;

    Json() = default;
    static Json boolean(bool b);
    static Json number(double d);
    static Json string(std::string s);
    static Json array(Array items = {});
    static Json object(Object members = {});

    Kind kind() const { return static_cast<Kind>(v_.index()); }
    bool is_null() const { return kind() == Kind::null; }
    bool is_bool() const { return kind() == Kind::boolean; }
    bool is_string() const { return kind() == Kind::string; }
    bool is_array() const { return kind() == Kind::array; }
    bool is_object() const { return kind() == Kind::object; }

    // Accessors of the kind held; calling one of another kind throws std::bad_variant_access.
    bool as_bool() const { return std::get<bool>(v_); }
    double as_number() const { return std::get<double>(v_); }
    const std::string& as_string() const { return std::get<std::string>(v_); }
    const Array& as_array() const { return std::get<Array>(v_); }
    Array& as_array() { return std::get<Array>(v_); }
    const Object& as_object() const { return std::get<Object>(v_); }
    Object& as_object() { return std::get<Object>(v_); }

    // A member of an object; nullptr when absent or when this is not an object.
    const Json* find(std::string_view key) const;
    Json* find(std::string_view key);
    // Sets a member of an object, in place when present, else appended.
    void set(std::string key, Json value);
    bool erase(std::string_view key);

    // JavaScript's truthiness, which Nx's `if (x.cache)`-style checks use.
    bool truthy() const;

    // Where the value starts in its file, 1-based; 0 when it was not read from a file.
    std::uint32_t line() const { return line_; }
    std::uint32_t column() const { return column_; }
    void set_position(std::uint32_t line, std::uint32_t column)
    {
        line_ = line;
        column_ = column;
    }

    // Compact JSON text (RFC 8259), members in order.
    std::string dump() const;
    // Compact JSON text with object keys sorted at every level: equal for equal parsed content,
    // whatever the formatting or member order. For cache keys.
    std::string canonical() const;
    // "a string", "an object", ...: for messages saying what was found.
    const char* describe() const;

    // Deep equality of values (object members compared in order, positions ignored).
    friend bool operator==(const Json& a, const Json& b);

private:
    std::variant<std::monostate, bool, double, std::string, Array, Object> v_;
    std::uint32_t line_ = 0, column_ = 0;
};

// Whether a comma may end an array or object (`[1, 2,]`, `{"a": 1,}`): Nx reads its configuration
// files with jsonc-parser's allowTrailingComma; what qk itself writes (cache entries, reports) is
// read strictly, so a file damaged into that shape is not taken for a good one.
enum class TrailingCommas : std::uint8_t { refuse, allow };

// Parses JSON with `//` and `/* */` comments (as Nx falls back to jsonc-parser). A leading BOM is
// skipped. Errors read "<file>:<line>:<column>: <what was expected>, found <what was there>".
Result<Json> parse_json(std::string_view text, std::string_view file, TrailingCommas commas = TrailingCommas::refuse);
// The largest configuration file qk reads (nx.json, project.json, package.json, a JSON input): a real
// one holds kilobytes, and parsed, a file takes up to ~50 times its size (a tree of small values).
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{8} << 20;

// Reads and parses a configuration file `path` as Nx reads nx.json, project.json and package.json
// (comments and trailing commas allowed); `display` names it in messages (a workspace-relative path).
// A file over kMaxConfigFileBytes is an error saying so, read no further.
Result<Json> read_json_file(const std::filesystem::path& path, std::string_view display);

}  // namespace qk::workspace
