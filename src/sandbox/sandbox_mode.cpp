#include "qk/sandbox/sandbox_mode.hpp"

#include <fmt/format.h>

namespace qk::sandbox {

Result<SandboxMode> parse_sandbox_mode(std::string_view text)
{
    if (text.empty() || text == "audit")
        return SandboxMode::audit;
    if (text == "enforce")
        return SandboxMode::enforce;
    return error(fmt::format("--sandbox={} is not a mode: use --sandbox (or --sandbox=audit) or --sandbox=enforce",
                             text));
}

}  // namespace qk::sandbox
