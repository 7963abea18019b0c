// EnforceLauncher: the record::Launcher of a task under --sandbox=enforce. Each command runs through
// qk-sandbox-exec with the task's plan (its grants, the directories bound through, its overlay), and
// through the inner launcher (recording it when a recorder works, so refused reads can be listed).
// Commands run one after another share an overlay upper layer; commands side by side each have their
// own, as two overlays cannot share one. What the layers hold is applied when the task ends. Where the run
// has one helper serving every command (HelperServer), each command's helper is forked by it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "qk/enforce/sandbox_dir.hpp"
#include "qk/enforce/sandbox_plan.hpp"
#include "qk/record/launcher.hpp"
#include "helper_server.hpp"

namespace qk::sandbox {

class EnforceLauncher final : public record::Launcher {
public:
    // `plan` holds everything but the per-command parts (upper, work, tmpdir, result); `dir` is the run's
    // sandbox directory (unused without an overlay); `helper` the qk-sandbox-exec to start; `server`, when
    // not null, the run's one helper, which the inner launcher may have fork each command's instead.
    EnforceLauncher(record::Launcher& inner, const enforce::SandboxDir& dir, enforce::SandboxPlan plan,
                    std::string helper, bool private_tmp, HelperServer* server);

    Result<record::ExitStatus> run(const record::LaunchRequest& request, record::CancelToken& cancel) override;

    // The command directories made, in order (each upper to read and apply as the task ends).
    const std::vector<enforce::SandboxDir::CommandDirs>& layers() const { return layers_; }
    // Why a command's sandbox could not be built, if one could not (the first such).
    const std::optional<std::string>& setup_failure() const { return setup_failure_; }
    // The Landlock ABI the helper reported (0 before a command ran).
    int landlock_abi() const { return landlock_abi_; }

private:
    struct Slot {
        std::size_t layer;
        std::size_t command;
    };
    Result<Slot> take_layer();
    void release_layer(std::size_t layer);

    record::Launcher& inner_;
    const enforce::SandboxDir& dir_;
    const enforce::SandboxPlan plan_;
    const std::string helper_;
    const bool private_tmp_;
    HelperServer* const server_;

    std::mutex mutex_;
    std::vector<enforce::SandboxDir::CommandDirs> layers_;
    std::vector<bool> busy_;
    std::size_t commands_ = 0;
    std::optional<std::string> setup_failure_;
    int landlock_abi_ = 0;
};

}  // namespace qk::sandbox
