// Sandbox: what `qk run-many --sandbox` adds to a run, audit or enforce: before a task runs, the
// launcher its commands go through (or why it runs unsandboxed, or is refused); after, what it did
// judged by its rules; at the end, the run's RunAudit for the summary and --sandbox-report. Both modes
// take a task's rules from task_rules (qk/sandbox/task_rules.hpp) and place installed packages the same way.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "qk/audit/findings.hpp"
#include "qk/key/read_sets.hpp"
#include "qk/key/session.hpp"
#include "qk/record/launcher.hpp"
#include "qk/record/recorder.hpp"
#include "qk/rules/installed_packages.hpp"
#include "qk/rules/rules.hpp"
#include "qk/sandbox/output_directories.hpp"
#include "qk/sandbox/sandbox_mode.hpp"
#include "qk/util/result.hpp"

namespace qk::sandbox {

// One task under the sandbox, from start() to finish().
class TaskSandbox {
public:
    TaskSandbox(std::size_t task, rules::Rules rules) : task(task), rules(std::move(rules)) {}
    virtual ~TaskSandbox() = default;
    virtual record::Launcher& launcher() = 0;

    std::size_t task;
    rules::Rules rules;
    OutputDirectories directories;  // made for it as it starts, removed if left empty
    bool command_failed = false;    // set by the runner before finish(): its commands ran and failed
};

class Sandbox {
public:
    virtual ~Sandbox() = default;

    // What start() decided: run sandboxed (`task` set), run unsandboxed (neither set: the sandbox is off
    // on its target, or audit cannot record it), or do not run (`refused`: why, for the task's output).
    struct Start {
        std::unique_ptr<TaskSandbox> task;
        std::optional<std::string> refused;
    };
    virtual Start start(std::size_t i, const std::vector<std::string>& scratch) = 0;

    // After its commands ended. `interrupted` when the run stopped it; `failed_to_run` holds why it could
    // not run at all. An Error when what it produced could not be kept (enforce could not apply its
    // outputs): the task then failed and is not cached.
    virtual Status finish(std::unique_ptr<TaskSandbox> run, bool interrupted, const std::string& failed_to_run) = 0;

    // Task `i` was restored from the cache: it ran nothing, so it is neither checked nor refused.
    void restored(std::size_t i);
    // What a restored task's record adds beyond its status (SandboxAudit under --record: the inputs no
    // recorded run read, from the counts earlier runs kept).
    virtual void add_to_restored(std::size_t /*i*/, audit::TaskAudit& /*record*/) {}
    // Task `i` was restored from a remote cache whose entry carries `record`, the sandbox's record of it
    // where it ran: it joins this run's audit as that machine saw it (TaskAudit::from_remote_cache).
    void restored_remote(std::size_t i, audit::TaskAudit record);
    // Task `i`'s record once finish() made it (what its cache entry carries), or nullopt.
    std::optional<audit::TaskAudit> record_of(std::size_t i);
    // The run's header for an entry's record: mode, recorder, Landlock, the run's identity once stamped.
    audit::RunAudit header();

    // --record: after finish(), the read set to save with task i's result, or why none can be; nullopt
    // when the task was not recorded for the cache (no --record, or no qk:ultracache on its target).
    virtual std::optional<Result<key::ReadSet>> take_read_set(std::size_t /*i*/) { return std::nullopt; }
    // After finish(): why task i's result must not be cached, or nullopt. Under enforce, a task refused
    // anything (it may have gone on another way: its result need not be what it is without the sandbox).
    virtual std::optional<std::string> withheld(std::size_t i);
    // After finish(): what the sandbox did before task i ran that may change what its commands leave (an
    // output directory enforce made under Landlock alone), for the runner to say; its result is not
    // cached either. nullopt when nothing.
    virtual std::optional<std::string> changed(std::size_t /*i*/) { return std::nullopt; }
    // Whether task i would be recorded for the cache if it ran (--record, qk:ultracache, a recorder).
    virtual bool records_for_cache(std::size_t /*i*/) const { return false; }

    // A line for the top of the run's output when the whole run is affected (no recorder, Landlock
    // alone), or empty.
    virtual std::string notice() const;

    // Everything gathered, finished (counts and run-wide views derived).
    audit::RunAudit result();

protected:
    explicit Sandbox(key::Session& session) : session_(session) {}
    // The recorder `choice` names and the workspace's install; with auto and no recorder working, none
    // (audit_.no_recorder says why). An explicit recorder that cannot record is an error.
    Status open_common(record::RecorderChoice choice, const RecorderSettings& settings, const std::string& mode);
    Result<rules::Rules> rules_of(std::size_t i, const std::vector<std::string>& scratch);
    void add(audit::TaskAudit audit);
    const workspace::Task& task(std::size_t i) const;

    key::Session& session_;
    std::unique_ptr<record::Recorder> recorder_;
    std::shared_ptr<const rules::InstalledPackages> installed_;
    std::mutex mutex_;
    audit::RunAudit audit_;
    MadeDirectories made_directories_;  // shared by the tasks running at once
};

// `qk run-many --sandbox=<mode>`'s sandbox; an Error when the mode cannot work here (enforce without
// Landlock, a recorder named that cannot record, a bad .modules.yaml). `record` (--record, audit only)
// records the tasks with qk:ultracache for the cache as well; with `mode` off it records only them,
// and audits nothing.
// `settings`: the environment's (QK_SANDBOX_*, the recorder's), read where qk started.
Result<std::unique_ptr<Sandbox>> open_sandbox(SandboxMode mode, record::RecorderChoice choice, key::Session& session,
                                              const Settings& settings, bool record = false);

// The Landlock ABI this machine's kernel offers (0: none), which every report's provenance names whatever
// the mode: asked of enforce, which owns Landlock, for the runner, which does not know enforce.
int machine_landlock_abi();

}  // namespace qk::sandbox
