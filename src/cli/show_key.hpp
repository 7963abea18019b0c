// A task key for a person, and as JSON: `qk show task P:T [--json]`.
#pragma once

#include <string>
#include <vector>

#include "qk/key/session.hpp"
#include "qk/key/task_key.hpp"

namespace qk::cli {

std::string key_text(key::Session& s, const key::TaskKey& k, const std::vector<std::string>& depends_on);
std::string key_json(key::Session& s, const key::TaskKey& k, const std::vector<std::string>& depends_on);

}  // namespace qk::cli
