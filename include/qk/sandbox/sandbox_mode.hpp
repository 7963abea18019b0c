// The modes of `--sandbox`: off, audit (each task recorded and judged) and enforce (each task confined).
#pragma once

#include <string_view>

#include "qk/util/result.hpp"

namespace qk::sandbox {

enum class SandboxMode { off, audit, enforce };

// "" and "audit" are audit; "enforce"; anything else is an error naming the choices.
Result<SandboxMode> parse_sandbox_mode(std::string_view text);

}  // namespace qk::sandbox
