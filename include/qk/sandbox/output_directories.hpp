// The directories a sandboxed task's outputs lie in that do not exist yet: created as it starts, so a
// tool that renames a directory it built beside its output finds the parent there rather than making
// it outside its outputs, and removed again if the task leaves them empty. The output itself is not
// created: its path may name a file.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace qk::sandbox {

// The directories a run made for its tasks' outputs, with how many running tasks hold each: tasks that
// run at once may declare outputs in one directory, and the first to end must not remove it while
// another is about to write there (under Landlock alone, whose grant is bound to that very directory,
// one made again would not even be writable).
class MadeDirectories {
public:
    // Makes those of `dirs` (workspace-relative, parents first) missing under `root`; returns those this
    // task now holds: the ones it made, and the ones another running task made and still holds.
    std::vector<std::string> acquire(const std::filesystem::path& root, const std::vector<std::string>& dirs);
    // Lets go of `held`; a directory no running task holds any more is removed if empty.
    void release(const std::filesystem::path& root, const std::vector<std::string>& held);

private:
    std::mutex mutex_;
    std::map<std::string, int> holders_;
};

class OutputDirectories {
public:
    // Creates those of `dirs` (workspace-relative, parents first) that are missing under `root`. A
    // directory is never made through a symbolic link, nor where a file stands: those are left alone.
    // `shared`: the run's, so that tasks running at once share what they make.
    static OutputDirectories create(const std::filesystem::path& root, const std::vector<std::string>& dirs,
                                    MadeDirectories& shared);
    // Those of `dirs` missing under `root`, made elsewhere (by enforce, in a command's overlay, whence
    // they reach the workspace when its changes are applied), to remove again if left empty.
    static OutputDirectories missing(const std::filesystem::path& root, const std::vector<std::string>& dirs);

    OutputDirectories() = default;
    OutputDirectories(OutputDirectories&& o) noexcept { *this = std::move(o); }
    OutputDirectories& operator=(OutputDirectories&& o) noexcept;
    ~OutputDirectories() { remove_empty(); }

    // Removes the directories created that are still empty (and, when shared, held by no other running
    // task), children first. Idempotent.
    void remove_empty();
    const std::vector<std::string>& created() const { return created_; }

private:
    std::filesystem::path root_;
    std::vector<std::string> created_;
    MadeDirectories* shared_ = nullptr;
};

}  // namespace qk::sandbox
