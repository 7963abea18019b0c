// RunMany: `qk run-many` and `qk run`: the tasks of a request in dependency order, N at a time, each
// restored from the local cache when its key is there, else run and, when it succeeds, stored.
#pragma once

#include <atomic>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <set>

#include "qk/key/cache.hpp"
#include "qk/key/read_sets.hpp"
#include "qk/key/session.hpp"
#include "qk/key/task_history.hpp"
#include "qk/report/run_report.hpp"
#include "qk/run/output_style.hpp"
#include "qk/record/recorder.hpp"
#include "qk/sandbox/sandbox_mode.hpp"
#include "qk/util/result.hpp"
#include "qk/util/settings.hpp"
#include "qk/workspace/task_graph.hpp"

namespace qk::record {
class ProcessLauncher;
}
namespace qk::sandbox {
class Sandbox;
}
namespace qk::remote {
class RemoteCache;
}

namespace qk::run {

// The runner's own parts (src/run): only pointers to them are kept here.
class CommandRunner;
class OutputDisplay;
class RemoteShare;
struct RemotePolicy;
class WorkspaceLock;
class Scheduler;
struct TaskContext;
enum class Outcome : std::uint8_t;

struct RunRequest {
    workspace::TaskRequest tasks;
    std::filesystem::path directory = ".";
    unsigned parallel = 0;  // 0: the number of cores
    bool skip_cache = false;
    bool dry_run = false;   // print each task's key hash, run nothing
    int output_fd = 1;
    bool is_terminal = false;
    // --output-style; nullopt (not given): stream, but a restored task's output is not replayed.
    std::optional<OutputStyle> output_style;
    bool verbose = false;  // --verbose: the sandbox's summary names the process behind each access
    sandbox::SandboxMode sandbox = sandbox::SandboxMode::off;
    record::RecorderChoice recorder = record::RecorderChoice::automatic;  // QK_RECORDER, --recorder
    std::string sandbox_report;  // --sandbox-report: where to write the findings as JSON
    bool no_wait = false;  // --no-wait: fail at once when another run holds the workspace
    // --record: tasks with qk:ultracache are recorded, and what they read outside their keys is saved
    // with their results (key/read_sets.hpp); with `sandbox` audit, the audit reads the same recordings.
    bool record = false;
    std::string report;  // --report: where to write the run as JSON (report/run_report.hpp)
    // The signal that stopped the run (0: none), set from another thread: read while prepare() waits for
    // the workspace lock, before there is a runner to cancel.
    const std::atomic<int>* interrupted = nullptr;
    // The environment's settings (NX_PARALLEL, the sandbox's and recorder's), read where qk started.
    Settings settings;
    // --remote-cache: read, readwrite or off; empty: readwrite when a server is named (read when nx.json's
    // qk.remoteCache says readOnly), off when none is.
    std::string remote_cache;
};

class RunMany {
public:
    // Loads the workspace, builds the task graph and checks every task can run and be keyed: all
    // before anything runs. Errors are the user's to fix (bad configuration, unknown names, a cycle).
    static Result<std::unique_ptr<RunMany>> prepare(const RunRequest& request);
    ~RunMany();

    // Runs the tasks (or prints their hashes for a dry run). Returns the exit status: 0 when every task
    // succeeded, 1 when one failed or was skipped. An Error when the run itself could not go on.
    Result<int> run();

    // From any thread (a signal): no task starts any more and the running ones are stopped.
    void cancel();
    bool cancelled() const { return cancelled_; }

private:
    RunMany();
    Outcome run_task(std::size_t i);
    // The key of task i, computed again when it hashes what its dependencies wrote.
    Result<std::shared_ptr<const key::TaskKey>> key_for(std::size_t i);
    TaskContext context_for(std::size_t i) const;
    int dry_run();
    // Hands the remote cache every entry this run will ask for and lacks, to fetch ahead of the tasks.
    void prefetch_remote();
    void clear_leftovers();
    // The audit's summary after the run's, and --sandbox-report. False when the report could not be written.
    bool report_audit();
    // --report. False when it could not be written.
    bool write_run_report();
    // The run and machine the reports name, read once and only when one is written.
    const audit::RunIdentity& run_identity();
    // Each task of a finished audit given its key's hash and this machine's provenance.
    void stamp(audit::RunAudit& audit);
    // One task's record given this machine's provenance (`machine`, report::machine_provenance).
    static void stamp_task(audit::TaskAudit& t, const audit::Provenance& machine);
    // The cache entry to restore task i from, if any: through a read set that still matches when the
    // key has some, else the key's own entry. Sets `why` to why none can be used.
    std::optional<key::CacheHit> lookup(std::size_t i, const key::TaskKey& key, std::string& why);
    // Restores task i from its cache entry, when it has one whose outputs are its own and the restore
    // works; else false, `run.ran_because` saying why it runs.
    bool restore_task(std::size_t i, const key::TaskKey& key, report::TaskRun& run);
    // Stores a result that succeeded: with the read set --record saved, or plainly (not when recordings
    // of the key say it reads what the key leaves out).
    void store(std::size_t i, const key::TaskKey& key, const key::CacheRecord& record);
    // Task i's sandbox record for its cache entry (report/entry_report.hpp) into `record`, and returned
    // (the remote cache's upload policy judges it). nullopt when the sandbox did not see it run.
    std::optional<audit::TaskAudit> add_record(std::size_t i, key::CacheRecord& record);
    // Puts task i's warm state in place where its warm paths are absent: `hit`'s when it keeps some, else
    // that of the task's newest stored entry (run_many_warm.cpp). Never fails the task.
    void put_warm(std::size_t i, const key::CacheHit* hit);
    // Why task i's result may not be what its key says, if it may: a file its key holds, its own or a
    // dependency's through a `^` input, changed while it ran ("src/a.ts changed while it ran: ..."), even if
    // put back before it ended (its ctime moved), or in the task's own view over the overlay (a discarded
    // write). Such a result is not stored (as Bazel guards against a concurrent edit). run_many_guard.cpp.
    std::optional<std::string> changed_while_running(std::size_t i, const key::TaskKey& key);

    RunRequest request_;
    std::unique_ptr<key::Session> session_;
    unsigned parallel_ = 1;     // tasks at once: --parallel, NX_PARALLEL, nx.json, the cores
    bool skip_cache_ = false;   // --skip-nx-cache, NX_SKIP_NX_CACHE=true, nx.json skipNxCache
    std::string store_refused_;  // why this run must store nothing: outputs others may be writing
    std::unique_ptr<WorkspaceLock> lock_;  // held from before the cache opens to the end of the run
    std::unique_ptr<key::LocalCache> cache_;
    std::unique_ptr<key::ReadSetStore> read_sets_;
    std::unique_ptr<key::TaskHistory> history_;  // each task's last stored key, to say what moved it
    std::vector<report::TaskRun> runs_;  // what --report says of each task, filled as it runs
    std::optional<audit::RunIdentity> run_identity_;
    std::unique_ptr<OutputDisplay> display_;
    std::unique_ptr<Scheduler> scheduler_;
    std::unique_ptr<record::ProcessLauncher> launcher_;
    std::unique_ptr<sandbox::Sandbox> sandbox_;
    // The remote cache, when the run uses one: its policy and client made in prepare() (a bad URL is found
    // before anything runs), the share itself in run(), where the display is.
    std::unique_ptr<RemotePolicy> remote_policy_;
    std::unique_ptr<remote::RemoteCache> remote_client_;
    std::unique_ptr<RemoteShare> remote_;
    // Per task: restored from the remote cache, and the record its entry carried.
    // Bytes, not vector<bool>: tasks on different threads set their own, which bits of one word would race.
    std::vector<std::uint8_t> from_remote_;
    std::vector<std::optional<audit::TaskAudit>> remote_records_;
    // What a stored entry's record says of this machine and run (set in run() when the sandbox is on).
    std::optional<audit::Provenance> machine_;
    audit::RunAudit entry_header_;
    std::vector<std::string> environment_;
    // Tasks whose key must be computed again as they start (their inputs hash dependencies' outputs).
    std::vector<bool> rekey_;
    // Each task's scratch directories, emptied before it runs.
    std::vector<std::vector<std::string>> scratch_;
    // Each task's warm paths, resolved (empty: none), and why they could not be, when they could not:
    // such a task keeps no warm state, and says so when it runs.
    std::vector<std::vector<std::string>> warm_;
    std::vector<std::string> warm_problem_;

    std::atomic<bool> cancelled_{false};
    // Guards scheduler_ and remote_ being set in run() against cancel() from the interrupt's thread.
    std::mutex parts_mutex_;
    std::mutex running_mutex_;
    std::set<CommandRunner*> running_;
};

}  // namespace qk::run
