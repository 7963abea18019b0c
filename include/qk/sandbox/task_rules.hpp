// The one way a run's task gets its Rules: its declarations and key, its dependencies' outputs and
// installed packages, where it sits in the run. The audit, enforce and `qk show task --rules` all ask here.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "qk/key/session.hpp"
#include "qk/rules/installed_packages.hpp"
#include "qk/rules/rules.hpp"
#include "qk/util/result.hpp"

namespace qk::sandbox {

// Task `i`'s rules. The keys of its dependencies must have been computed (they name the outputs it may
// read). `scratch` is its resolved scratch directories (qk/run/scratch.hpp); `installed` places reads of
// installed packages (null: none are reported).
Result<rules::Rules> task_rules(key::Session& session, std::size_t i, const std::vector<std::string>& scratch,
                                std::shared_ptr<const rules::InstalledPackages> installed = nullptr);

}  // namespace qk::sandbox
