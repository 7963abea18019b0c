// The run and machine a report says it came from: the run id and shard from QK_RUN_ID and QK_SHARD or
// the CI's own variables, the commit, and this machine's host name, kernel and Landlock ABI.
#pragma once

#include <string>

#include "qk/audit/provenance.hpp"
#include "qk/util/settings.hpp"

namespace qk::report {

// The run's identity: its id from QK_RUN_ID, else GITHUB_RUN_ID (with -GITHUB_RUN_ATTEMPT),
// CI_PIPELINE_ID, BUILDKITE_BUILD_ID, CIRCLE_WORKFLOW_ID, else one made up for this run alone
// ("local-<host>-<time>-<pid>", which merges with nothing else); the shard from QK_SHARD, else
// CI_NODE_INDEX, BUILDKITE_PARALLEL_JOB, CIRCLE_NODE_INDEX; the commit from GITHUB_SHA, CI_COMMIT_SHA,
// BUILDKITE_COMMIT, CIRCLE_SHA1, else `git rev-parse HEAD` in `workspace_root`.
audit::RunIdentity run_identity(const std::string& workspace_root, const EnvLookup& env);

// This machine as every task's provenance starts: host, kernel, and the Landlock ABI its kernel offers
// (`landlock_abi`, which the sandbox asks: sandbox::machine_landlock_abi), shard from `run`.
audit::Provenance machine_provenance(const audit::RunIdentity& run, int landlock_abi);

}  // namespace qk::report
