// What `--record` saves for a task's result: from its recording, the paths in the workspace it read, or
// looked for and did not find, that its key does not hold (.git and dotenv files, undeclared sources and
// configuration, files of projects it depends on, installed packages outside its key), less its
// outputs, scratch directories, warm paths and ignoreReads, each hashed as the task left it.
#pragma once

#include <filesystem>

#include "qk/key/read_sets.hpp"
#include "qk/record/recording.hpp"
#include "qk/rules/rules.hpp"
#include "qk/util/result.hpp"

namespace qk::sandbox {

// An Error says why no set can be saved: the recording is incomplete, or the task changed a file it
// read (what it held when the task started is then unknown).
Result<key::ReadSet> recorded_reads(const record::Recording& recording, const rules::Rules& rules,
                                    const std::filesystem::path& root);

}  // namespace qk::sandbox
