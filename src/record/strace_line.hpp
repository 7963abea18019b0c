// The lexical layer of the strace engine: one `strace -f -y` line split into its pid, call name,
// arguments and return value, and strace's quoted strings, fd annotations and flag sets decoded.
// It knows strace's syntax, not what any system call means.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::record::strace {

inline constexpr long kAtFdcwd = -100;

// "[pid  12] body" (output to a terminal) or "12  body" (-o FILE); pid 0 when the line has neither.
struct Prefixed {
    pid_t pid = 0;
    std::string_view body;
};
Prefixed split_pid_prefix(std::string_view line);

// The call name a line starts with ("openat" for "openat(..."), empty if it does not start like a call.
std::string_view call_name(std::string_view text);

// A quoted string, escapes decoded; a "..." after the closing quote means strace cut it short.
struct Quoted {
    std::string bytes;
    bool truncated = false;
};
Result<Quoted> parse_quoted(std::string_view text);

// An fd argument: "3", "3</a/b>", "3</a/b>(deleted)", "3</a/b (deleted)>", "AT_FDCWD</cwd>", "-100</cwd>".
struct FdArg {
    long fd = -1;
    std::optional<std::string> path;  // -y's annotation, " (deleted)" removed
    bool deleted = false;
};
Result<FdArg> parse_fd(std::string_view text);

// "name(a, b, {c, d}) = result": the arguments split at their top-level commas, trimmed.
struct Call {
    std::string_view name;
    std::vector<std::string_view> args;
    std::string_view result;
};
Result<Call> parse_call(std::string_view text);
// An Error unless the call has at least `n` arguments.
Status need_args(const Call& call, std::size_t n);

// A return value: "3</a>" (with its annotation), "0", "-1 ENOENT (...)" (value -ENOENT), "?" (unknown:
// the call never returned to the caller).
struct Return {
    bool known = false;
    long value = 0;
    std::optional<std::string> path;
    bool deleted = false;
};
Result<Return> parse_return(std::string_view text);

// "A|B|0x40": symbolic names through `lookup`, numbers in C syntax (0x.., 0.., decimal).
using NameLookup = std::optional<std::uint64_t> (*)(std::string_view);
Result<std::uint64_t> parse_flags(std::string_view text, NameLookup lookup);

// ["a", "b"...]: the strings (a last "..." element, strace's cut, is dropped). NULL or an address: none.
Result<std::vector<std::string>> parse_string_array(std::string_view text);

// The value of `key=` at the top level of "{key=value, ...}" (anything after the closing brace, like
// clone3's " => {...}", is ignored), or of a "key=value" argument list.
std::optional<std::string_view> struct_field(std::string_view text, std::string_view key);
std::optional<std::string_view> keyed_arg(const std::vector<std::string_view>& args, std::string_view key);

}  // namespace qk::record::strace
