// What one run recorded with --record adds to a task's input use (key::InputUseStore): which of its own
// declared input files its recording read or looked for. The count lives in the cache beside the
// read sets; the sandbox asks it as each recorded task ends.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "qk/key/session.hpp"
#include "qk/record/recording.hpp"
#include "qk/rules/rules.hpp"
#include "qk/util/result.hpp"

namespace qk::sandbox {

// Adds the run of task `i` to its counts and returns the files no counted run read (at least
// nx.json's qk.inputsNeverReadAfterRuns of them). Call it only for a complete recording of a task that
// succeeded: a task cut short reads less than it needs.
Result<std::vector<std::string>> count_input_use(key::Session& session, std::size_t i,
                                                 const record::Recording& recording, const rules::Rules& rules);

// The files no counted run read, from the counts as earlier runs left them (for a task restored from the
// cache, which this run does not record), among those its key holds now.
std::vector<std::string> never_read_so_far(key::Session& session, std::size_t i);

// The key's own input files (what its fileset groups select; not `^` inputs, which are the
// dependencies'), workspace-relative, sorted and unique.
std::vector<std::string> declared_input_files(const key::TaskKey& key, const key::FileIndex& files);

}  // namespace qk::sandbox
