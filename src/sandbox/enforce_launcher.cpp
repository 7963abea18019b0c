#include "enforce_launcher.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "qk/util/atomic_file.hpp"
#include "qk/util/io.hpp"

namespace qk::sandbox {

namespace fs = std::filesystem;

EnforceLauncher::EnforceLauncher(record::Launcher& inner, const enforce::SandboxDir& dir, enforce::SandboxPlan plan,
                                 std::string helper, bool private_tmp, HelperServer* server)
    : inner_(inner),
      dir_(dir),
      plan_(std::move(plan)),
      helper_(std::move(helper)),
      private_tmp_(private_tmp),
      server_(server)
{
}

Result<EnforceLauncher::Slot> EnforceLauncher::take_layer()
{
    std::lock_guard lock(mutex_);
    std::size_t command = commands_++;
    // One after another: the last layer, so a command sees what the one before it left. Side by side:
    // a layer of its own.
    bool any_busy = false;
    for (bool b : busy_)
        any_busy = any_busy || b;
    if (!layers_.empty() && !any_busy) {
        busy_.back() = true;
        return Slot{layers_.size() - 1, command};
    }
    QK_TRY(dirs, dir_.command_dirs());
    if (private_tmp_) {
        fs::path tmp = dirs->upper.parent_path() / "tmp";
        if (::mkdir(tmp.c_str(), 0700) != 0)
            return sys_error(fmt::format("cannot create {}", tmp.string()));
    }
    layers_.push_back(std::move(*dirs));
    busy_.push_back(true);
    return Slot{layers_.size() - 1, command};
}

void EnforceLauncher::release_layer(std::size_t layer)
{
    std::lock_guard lock(mutex_);
    busy_[layer] = false;
}

Result<record::ExitStatus> EnforceLauncher::run(const record::LaunchRequest& request, record::CancelToken& cancel)
{
    if (request.argv.empty())
        return error("cannot run a command: it is empty");
    QK_TRY(slot, take_layer());
    struct Release {
        EnforceLauncher* self;
        std::size_t layer;
        ~Release() { self->release_layer(layer); }
    } release{this, slot->layer};

    enforce::SandboxPlan plan = plan_;
    fs::path dir;
    {
        std::lock_guard lock(mutex_);
        const auto& layer = layers_[slot->layer];
        dir = layer.upper.parent_path();
        if (plan.overlay) {
            plan.upper = layer.upper.string();
            plan.work = layer.work.string();
        }
        if (plan.read_mask)
            plan.mask = layer.mask.string();
    }
    if (private_tmp_)
        plan.tmpdir = (dir / "tmp").string();
    plan.result = (dir / fmt::format("result-{}", slot->command)).string();
    plan.watch_pid = static_cast<int>(::getpid());
    const fs::path plan_file = dir / fmt::format("plan-{}", slot->command);
    // Not fsync'd: the plan lives as long as its command, and a crash takes the run directory with it.
    // Waiting for the disk here cost each command up to tens of milliseconds on ext4.
    QK_TRY_STATUS(write_file_atomically(plan_file, enforce::encode(plan), {.mode = 0600, .durable = false}));

    record::LaunchRequest sandboxed = request;
    sandboxed.argv = {helper_, plan_file.string(), "--"};
    sandboxed.argv.insert(sandboxed.argv.end(), request.argv.begin(), request.argv.end());
    // The server hands the helper its output as it is: a command that has one (every task's does).
    if (server_ && request.output_fd >= 0 && server_->available())
        sandboxed.start = [server = server_](const record::SpawnRequest& r) { return server->start(r); };
    auto status = inner_.run(sandboxed, cancel);
    if (!status)
        return status;

    auto text = read_file(plan.result);
    if (!text)
        return *status;  // killed before it could say (a cancelled run): its own status tells
    auto result = enforce::decode_result(*text);
    if (!result)
        return error(fmt::format("qk-sandbox-exec wrote a result qk cannot read ({}): {}", plan.result,
                                 result.error().message));
    {
        std::lock_guard lock(mutex_);
        landlock_abi_ = std::max(landlock_abi_, result->landlock_abi);
        if (result->setup && result->setup->stage != "exec" && !setup_failure_)
            setup_failure_ = result->setup->message;
    }
    if (result->setup && result->setup->stage == "exec")
        return Error{result->setup->message, result->setup->error};  // could not start, as without the sandbox
    if (result->setup)
        return error(fmt::format("the sandbox could not be built ({}): {}", result->setup->stage, result->setup->message));
    if (result->signal)
        return record::ExitStatus{0, *result->signal};
    if (result->exit_code)
        return record::ExitStatus{*result->exit_code, 0};
    return *status;
}

}  // namespace qk::sandbox
