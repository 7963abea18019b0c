// The directories a sandboxed task's outputs lie in that do not exist yet: created as it starts, so a
// tool that renames a directory it built beside its output finds the parent there rather than making
// it outside its outputs, and removed again if the task leaves them empty. The output itself is not
// created: its path may name a file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace qk::run {

class OutputDirectories {
public:
    // Creates those of `dirs` (workspace-relative, parents first) that are missing under `root`. A
    // directory is never made through a symbolic link, nor where a file stands: those are left alone.
    static OutputDirectories create(const std::filesystem::path& root, const std::vector<std::string>& dirs);
    // Those of `dirs` missing under `root`, made elsewhere (by enforce, in a command's overlay, whence
    // they reach the workspace when its changes are applied), to remove again if left empty.
    static OutputDirectories missing(const std::filesystem::path& root, const std::vector<std::string>& dirs);

    OutputDirectories() = default;
    OutputDirectories(OutputDirectories&&) = default;
    OutputDirectories& operator=(OutputDirectories&&) = default;
    ~OutputDirectories() { remove_empty(); }

    // Removes the directories created that are still empty, children first. Idempotent.
    void remove_empty();
    const std::vector<std::string>& created() const { return created_; }

private:
    std::filesystem::path root_;
    std::vector<std::string> created_;
};

}  // namespace qk::run
