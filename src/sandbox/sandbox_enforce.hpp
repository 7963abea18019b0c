// SandboxEnforce: `qk run-many --sandbox=enforce`: each task's commands run through qk-sandbox-exec
// over an overlay of the workspace (or under Landlock alone where no overlay can be mounted), with the
// grants its Rules walk gives; when it ends, what it may write is applied to the workspace and the rest
// listed as not kept. With a recorder, the reads it was refused are listed too.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "qk/enforce/base_registry.hpp"
#include "qk/enforce/probe_cache.hpp"
#include "qk/enforce/network_proxy.hpp"
#include "qk/enforce/sandbox_plan.hpp"
#include "qk/enforce/run_mirror.hpp"
#include "qk/enforce/sandbox_dir.hpp"
#include "qk/sandbox/sandbox.hpp"
#include "helper_server.hpp"

namespace qk::sandbox {

class SandboxEnforce final : public Sandbox {
public:
    // Probes the machine once (qk-sandbox-exec --probe) and makes the run's sandbox directory, removing
    // those of killed runs. An Error when enforce cannot work here: no Landlock, no qk-sandbox-exec, a
    // recorder named that cannot record.
    static Result<std::unique_ptr<SandboxEnforce>> open(record::RecorderChoice choice, key::Session& session,
                                                        const Settings& settings);
    ~SandboxEnforce() override;

    // Unsandboxed when "qk:sandbox": false is on its target; refused when its rules cannot be built.
    Start start(std::size_t i, const std::vector<std::string>& scratch) override;
    // Applies its layers (unless interrupted or it could not run), lists what was not kept and what was
    // refused. An Error when the outputs could not be applied.
    Status finish(std::unique_ptr<TaskSandbox> run, bool interrupted, const std::string& failed_to_run) override;
    std::string notice() const override;
    // An output qk made as a directory before the task ran, and the task left, under Landlock alone (or
    // its list without a read mask).
    std::optional<std::string> changed(std::size_t i) override;

private:
    explicit SandboxEnforce(key::Session& session) : Sandbox(session) {}
    class Enforced;
    // Removes a command's directories off the critical path (freeing many replaced files takes time).
    void remove_later(enforce::SandboxDir::CommandDirs dirs);
    void janitor();
    // Runs qk-sandbox-exec --probe in a scratch directory of the run, and keeps its verdict for the boot.
    Result<enforce::ProbeReport> probe(const std::string& root);
    // Those of `made` the task left, said (and kept for changed()); nullopt when none.
    std::optional<std::string> note_outputs_made(std::size_t i, const std::vector<std::string>& made);
    // The plan's network for a task that declares one (sandbox_enforce_network.cpp): its own namespace, and
    // with a list the run's proxy (started here for the first such task) under a token kept in `token`.
    // An Error when no network namespace can be made here: the task is refused, never run open.
    Status plan_network(const workspace::Task& t, enforce::SandboxPlan& plan, std::string& token);
    // From the probe: whether commands can have a network namespace, else why not (network_namespace_).
    void note_network_namespace(const enforce::ProbeReport& report);
    // What the proxy refused the task, its token forgotten.
    std::vector<enforce::NetworkRefusal> network_refusals(const std::string& token);

    std::string helper_;
    // The run's one helper, forking every command's (null with QK_SANDBOX_SERVE=0); started by the first.
    std::unique_ptr<HelperServer> server_;
    std::optional<enforce::ProbeCache> probe_cache_;  // where this environment's verdict is kept, if it can be
    std::optional<enforce::BaseRegistry> registry_;  // this run live, and what its commands are kept from
    std::optional<enforce::SandboxDir> dir_;
    std::string sandbox_note_;  // where the run keeps its sandboxes, when not where it was told
    bool overlay_ = true;
    bool user_namespace_ = false;  // Landlock alone as root: each command in a user namespace (SandboxPlan)
    bool private_tmp_ = false;
    std::vector<std::string> covers_;  // sandboxes' directories, kept from every command (SandboxPlan::cover)
    bool read_mask_ = false;  // tasks' reads held by a read mask (the probe found one works here)
    std::optional<enforce::RunMirror> mirror_;  // the run's mirror of the workspace, as root
    std::vector<std::string> run_outputs_;  // where the run's tasks may write: kept out of masks that refuse it
    std::map<std::size_t, std::string> made_outputs_;  // by task: what changed() says (under mutex_)
    // Whether a command can have a network namespace of its own (the probe's netns step, and a user
    // namespace to make it in); else why not, for a task that declares its network.
    bool network_namespace_ = false;
    std::string no_network_namespace_;
    std::unique_ptr<enforce::NetworkProxy> proxy_;  // the run's, once a task declares a list (under mutex_)

    std::mutex janitor_mutex_;
    std::condition_variable janitor_wake_;
    std::deque<enforce::SandboxDir::CommandDirs> to_remove_;
    bool stopping_ = false;
    std::thread janitor_;
};

}  // namespace qk::sandbox
