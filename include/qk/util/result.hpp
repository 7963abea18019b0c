// Result<T>: the value of an operation that can fail, or the Error saying why. FatalError: the one
// exception, thrown where going on is pointless and caught only in main().
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace qk {

// What a caller may branch on besides errno; no code reads a message. A kind is added when a caller
// needs to tell an error apart, and set where the error is made.
enum class ErrorKind : std::uint8_t {
    other,      // nothing a caller tells apart
    cancelled,  // not started because the run is being cancelled (a Launcher's refusal; errno ECANCELED)
    // {workspaceRoot} where workspace::resolve_tokens refuses it, which each caller words its own way:
    workspace_root_not_first,      // after the start of the value
    workspace_root_without_slash,  // at its start, but followed by something other than '/'
    // A cache entry archive refused on import (LocalCache::begin_import); the caller treats each as a miss:
    cache_entry_corrupt,  // damaged or tampered bytes: gzip, truncation, trailing bytes, a hash or size mismatch
    cache_entry_unsafe,   // well formed, but would write where an entry must not: a path or link refused
    cache_entry_version,  // another format version (a newer or older qk's): a miss, not a fault
    cache_entry_too_big,  // a task's outputs take more on disk than an entry may (QK_CACHE_MAX_ENTRY_SIZE)
    // A remote cache's transfer (src/remote) that failed; the run goes on as if it missed, saying why once.
    remote_unreachable,  // no connection: refused, no route, name not resolved, the connect timeout
    remote_timeout,      // connected, but no byte moved for the stall timeout
    remote_forbidden,    // 401 or 403: a wrong token, or one that may only read (a pull request's)
    remote_server,       // 5xx: the server's own failure
    remote_truncated,    // the transfer broke off: fewer bytes than announced, the connection closed midway
    remote_tampered,     // the body is not what was stored: a signature or SHA-256 that does not match
    remote_protocol,     // an answer the protocol does not expect (another status, a malformed pointer)
    remote_too_large,    // 413: the server refuses an entry of this size (its body limit, not the entry's fault)
};

// A message for a person: what failed, where, and what to do about it. `sys_errno` is the system's
// reason when a system call failed (ENOENT: it is not there), for callers that branch on it.
struct Error {
    std::string message;
    int sys_errno = 0;
    ErrorKind kind = ErrorKind::other;
};

inline Error error(std::string message, ErrorKind kind = ErrorKind::other)
{
    return Error{std::move(message), 0, kind};
}
// "what: strerror(errno)", keeping errno for callers that branch on it.
inline Error sys_error(const std::string& what, int err = errno)
{
    return Error{what + ": " + std::strerror(err), err};
}
// `e` with a caller's words in place of its message (which they usually quote): errno and kind go up
// unchanged, for a caller further up that branches on them.
inline Error with_message(Error e, std::string message)
{
    e.message = std::move(message);
    return e;
}

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error e) : v_(std::move(e)) {}

    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    const T& value() const& { return std::get<0>(v_); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    const Error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error e) : e_(std::move(e)) {}
    bool ok() const { return !e_; }
    explicit operator bool() const { return ok(); }
    const Error& error() const { return *e_; }

private:
    std::optional<Error> e_;
};

using Status = Result<void>;

// Thrown for errors the program cannot go on from; main() prints it and exits with `exit_code`.
class FatalError : public std::runtime_error {
public:
    explicit FatalError(const Error& e, int exit_code = 2) : std::runtime_error(e.message), exit_code_(exit_code) {}
    explicit FatalError(const std::string& message, int exit_code = 2)
        : std::runtime_error(message), exit_code_(exit_code) {}
    int exit_code() const { return exit_code_; }

private:
    int exit_code_;
};

// The early return every function returning a Result or Status makes when a call fails:
//   QK_TRY(doc, parse_json(text, file));  // `doc` is that Result, holding a value from here on
//   QK_TRY_STATUS(write_all(fd, bytes));
// The error is returned unchanged: a caller that has something to add says so itself.
#define QK_TRY(name, ...)      \
    auto name = (__VA_ARGS__); \
    if (!name)                 \
    return name.error()
#define QK_TRY_STATUS(...)                                 \
    do {                                                   \
        if (auto qk_status_ = (__VA_ARGS__); !qk_status_) \
            return qk_status_.error();                     \
    } while (false)

// Unwraps a Result or throws its error as fatal.
template <class T>
T or_fatal(Result<T> r)
{
    if (!r)
        throw FatalError(r.error());
    return std::move(r).value();
}
inline void or_fatal(const Status& s)
{
    if (!s)
        throw FatalError(s.error());
}

}  // namespace qk
