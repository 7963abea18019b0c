// The probe's verdict kept for the boot: `qk-sandbox-exec --probe` costs a run 70-370 ms on a busy VM,
// nearly all of it waiting for RCU grace periods as its test mounts go, and what it finds changes only
// with the kernel, the helper, the mounts and what limits qk's own process. A verdict is reused only
// where all of those read the same as when it was taken (the key), and only one where every step passed:
// where something failed, each run probes again and says why, as before.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "qk/enforce/probe.hpp"

namespace qk::enforce {

class ProbeCache {
public:
    // The cache for this process, the helper at `helper`, the workspace at `root` and sandboxes under
    // `scratch_base`, in `dir` (one of ours nobody else may write in, kept from every command: the
    // registry's home). nullopt where no key tells this environment apart: a seccomp filter is in force
    // (two filters read alike in /proc), or the boot's id cannot be read.
    static std::optional<ProbeCache> here(const std::filesystem::path& dir, const std::string& helper,
                                          const std::string& root, const std::string& scratch_base);

    // The verdict kept for this key, if any.
    std::optional<ProbeReport> load() const;
    // Keeps `report` when every step passed (Landlock included); best effort: a run that cannot write
    // it probes again next time.
    void store(const ProbeReport& report) const;
    // Drops the verdict: a command's sandbox failed to build although the probe passed (something the
    // key does not see changed), so the next run probes again.
    void forget() const;

    // What the key holds, one fact a line (for tests and for `qk doctor` to show).
    const std::string& key() const { return key_; }
    const std::filesystem::path& file() const { return file_; }

private:
    ProbeCache(std::filesystem::path file, std::string key) : file_(std::move(file)), key_(std::move(key)) {}

    std::filesystem::path file_;
    std::string key_;
};

}  // namespace qk::enforce
