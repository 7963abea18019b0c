// Why qk-sandbox-exec could not build a command's sandbox: the step, the errno, and a sentence for the
// user with the fix where one is known. Every step returns one instead of printing or exiting, so that
// the failure reaches qk through the result file whichever process met it.
#pragma once

#include <cerrno>
#include <cstring>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace qk::sandbox_exec {

struct SetupError {
    std::string stage;
    int error = 0;
    std::string message;
};

using Step = std::optional<SetupError>;  // nullopt: the step worked

inline SetupError setup_error(std::string stage, std::string what, int err = errno)
{
    return {std::move(stage), err, fmt::format("{}: {}", what, std::strerror(err))};
}

// The value of a /proc/sys file, or -1 when it cannot be read.
int sysctl_value(const char* path);

// What may have refused a user namespace or a step inside one, as a hint for the user ("" when nothing
// known applies): user namespaces disabled or restricted by AppArmor (Ubuntu 24.04), a seccomp filter.
std::string userns_hint();

}  // namespace qk::sandbox_exec
