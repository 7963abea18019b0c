// InputUse: for each task, how many runs recorded with --record declared each of its own input files,
// and in how many of those it read the file. A file declared in many such runs and read in none is a
// candidate to narrow the key (`inputsNeverRead` in --sandbox-report), never applied: a tool may read
// a file only sometimes, and a file it only stats still counts by its presence.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/util/result.hpp"

namespace qk::key {

struct InputUse {
    std::string path;         // workspace-relative
    std::uint32_t runs = 0;   // recorded runs whose key held it
    std::uint32_t read = 0;   // of those, the runs that read it or looked for it
    friend bool operator==(const InputUse&, const InputUse&) = default;
};

// The files declared in at least `runs` recorded runs and read in none, sorted.
std::vector<std::string> never_read(const std::vector<InputUse>& counts, std::uint32_t runs);

// <cache>/input-use: one file per task id. Runs of a workspace take turns (WorkspaceLock), and tasks of a
// run are distinct, so each file has one writer at a time.
class InputUseStore {
public:
    static InputUseStore open(const std::filesystem::path& cache_dir);

    // The counts kept for `task`, sorted by path; empty when there are none or they cannot be read (a
    // count lost costs a candidate, never a result).
    std::vector<InputUse> load(const std::string& task) const;
    // One more recorded run of `task`: `declared` holds the key's own input files now (sorted, unique),
    // `was_read` says which of them the run read. A file the key no longer holds is forgotten, so one
    // declared again starts from nothing. Returns the counts saved.
    Result<std::vector<InputUse>> add_run(const std::string& task, const std::vector<std::string>& declared,
                                          const std::function<bool(std::string_view)>& was_read);

private:
    explicit InputUseStore(std::filesystem::path dir) : dir_(std::move(dir)) {}
    std::filesystem::path file(const std::string& task) const;
    std::filesystem::path dir_;
};

}  // namespace qk::key
