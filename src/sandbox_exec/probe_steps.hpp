// qk-sandbox-exec --probe: what enforce can use here, tried step by step (Landlock's ABI; a user
// namespace, its id maps, a private mount tree, an overlay of a scratch tree, an overlay of the
// workspace), printed as an enforce::ProbeReport. What the steps make in scratch_dir stays there for the
// caller to remove.
#pragma once

#include <string>

#include "qk/enforce/probe.hpp"

namespace qk::sandbox_exec {

enforce::ProbeReport probe(const std::string& workspace_root, const std::string& scratch_dir);

}  // namespace qk::sandbox_exec
