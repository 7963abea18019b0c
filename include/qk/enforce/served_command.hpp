// A command the run's sandbox helper forks (`qk-sandbox-exec --serve`), as qk asks for it and as the helper
// answers: one codec for both ends of that channel. qk hands the helper, over its channel, a socket for the
// command and the task's cgroup; the helper forks into the cgroup and answers on the command's socket;
// its child reads the request (below) from that socket, with the command's output fd, and runs it as a
// helper exec'd with the same command line would.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::enforce {

struct ServedCommand {
    std::vector<std::string> argv;  // qk-sandbox-exec's own command line: itself, PLAN, --, PROGRAM ARGS...
    std::vector<std::string> env;   // "K=V", the complete environment
    std::string cwd;                // absolute
    bool own_process_group = false;
    friend bool operator==(const ServedCommand&, const ServedCommand&) = default;
};

// What the helper answers qk's "hello" on its channel, before any command: that it serves this protocol.
inline constexpr std::string_view kServedHello = "qk-serve 1";

// The request's header: the line "qk-serve 1 LENGTH\n", sent with the output fd; the body follows it.
inline constexpr std::size_t kServedHeaderMax = 64;
std::string served_header(std::size_t body_length);
// The body's length from a header; an Error naming what is wrong (another version of the helper, say).
Result<std::size_t> parse_served_header(std::string_view header);

std::string encode_body(const ServedCommand& command);
Result<ServedCommand> decode_served_command(std::string_view body);

// What the helper answers on the command's socket, a line each. Its child says started (with its pid) once
// it has read the request, joined the cgroup and entered the working directory, or refused (with the errno
// and the step: "request", "cgroup", "cwd") and exits; the helper then says ended (with the child's wait
// status) once it has reaped it. Where the fork itself failed the helper says failed (with the errno) and
// nothing more. The child writes before it exits and the helper after it reaped it: they come in order.
struct ServedAnswer {
    enum class Kind { started, refused, ended, failed };
    Kind kind = Kind::started;
    long value = 0;    // the pid, the errno, or the wait status
    std::string step;  // refused: which
    friend bool operator==(const ServedAnswer&, const ServedAnswer&) = default;
};
std::string encode_answer(const ServedAnswer& answer);
// Reads the answers off the front of `buffer`: the first whole line, consumed; nullopt until one has come.
// A line that is not an answer is an Error.
Result<std::optional<ServedAnswer>> take_answer(std::string& buffer);

}  // namespace qk::enforce
