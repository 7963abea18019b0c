// What the audit found: per task, every access its rules do not allow, sorted by kind; per run, the
// tasks' statuses and the run-wide views the summary and --sandbox-report show (read by many tasks,
// unkeyed reads once, manifest and toolchain reads counted once). Paths are workspace-relative.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qk/audit/provenance.hpp"
#include "qk/audit/suggestion.hpp"

namespace qk::audit {

// The kinds are a contract with --sandbox-report's readers: their JSON names never change.
struct TaskFindings {
    std::vector<std::string> reads_outside_inputs;  // readsOutsideInputs
    std::vector<std::string> tsconfig_reads;        // tsconfigReads: tsconfig*.json read outside the inputs
    std::vector<std::string> stray_writes;          // strayWrites: written outside the outputs, but in .git
    std::vector<std::string> git_writes;            // written in .git, which enforce allows (strayWrites too)
    // temporaryFiles: created and removed again outside its outputs (vite's config.timestamp-N.mjs). They
    // leave nothing, and enforce would discard nothing: listed apart, not counted as going beyond.
    std::vector<std::string> temporary_files;
    // Directories among stray_writes that the task created (and left): the summary folds what they hold
    // into one line, and suggests declaring each whole. Not a kind of its own in the report.
    std::vector<std::string> created_directories;
    std::vector<std::string> unkeyed_reads;         // unkeyedReads: .git and dotenv files read
    std::vector<std::string> manifest_reads;        // manifestReads: workspace packages' package.json
    std::vector<std::string> toolchain_reads;       // toolchainReads: .nvmrc, .npmrc, .tool-versions ...
    std::map<std::string, std::vector<std::string>> dependency_reads;  // dependencyReads: by project name
    // Installed packages read (found by their package.json), by name. The sandbox allows both, so
    // neither counts as going beyond what the task declares.
    std::vector<std::string> unkeyed_packages;  // unkeyedPackages: outside a key that names its packages
    std::vector<std::string> hoisted_packages;  // hoistedPackages: no dependency of what its importers install
    // Under enforce, what its declarations refused it (the run lists these instead of the kinds above):
    std::vector<std::string> refused_reads;     // refusedReads: opens Landlock refused, from its recording
    std::vector<std::string> refused_writes;    // refusedWrites: held by Landlock alone, refused as they happened
    std::vector<std::string> discarded_writes;  // discardedWrites: written outside its outputs, not kept
    // replacedReads: held by Landlock alone, reads its declarations allow, refused because the file was
    // made again (by another task) after its rules were built. Not its doing: not counted as going beyond.
    std::vector<std::string> replaced_reads;
    // refusedUnplaced: refusals through a descriptor or cwd of a process (/proc/<pid>/fd/3/x, /dev/fd/3)
    // that the recorder could not place in the workspace: absolute, as the task spelled them.
    std::vector<std::string> refused_unplaced;
    // refusedOutside: refusals outside the workspace (/proc/sys, a device), absolute; listed only for a
    // task that failed, since tools probe what they may not read (a home directory) and go on.
    std::vector<std::string> refused_outside;
    // refusedCalls: system calls refused outright, by name (io_uring_setup: enforce refuses io_uring).
    std::vector<std::string> refused_calls;
    // refusedNetwork: what the run's network proxy refused it, "host:port" ("[::1]:80"), as its declared
    // network (a list) does not name it. What it reached without the proxy had no route to refuse.
    std::vector<std::string> refused_network;
    // What it reached on the network, "host:port" (the name it looked up where it did, else the address;
    // "[2001:db8::1]:443"), each kind apart: network, what its declared network allows (everything when
    // it declares none, as the spec keeps the network open): listed, not counted; loopbackNetwork, the
    // machine's own (enforce leaves a task a loopback of its own: never judged); undeclaredNetwork, off
    // the machine and outside a declared false or list: going beyond, as enforce gives it no route.
    std::vector<std::string> network;
    std::vector<std::string> loopback_network;
    std::vector<std::string> undeclared_network;
    // Each connection behind the three lists above, as the recorder saw it (report's "connections"). Not
    // a kind: `reached` is the list entry it is listed under.
    struct Connection {
        std::string reached;   // "registry.npmjs.org:443": its entry in one of the lists
        std::string address;   // "104.16.0.1", "::1"
        std::uint16_t port = 0;
        bool datagram = false;  // UDP; otherwise TCP
        std::string host;       // the name looked up that gave the address; "" when none was seen
        std::uint32_t count = 0;  // connects and datagrams to it
        bool answered = false;    // a connect got through or a datagram was sent (not refused outright)
        bool operator==(const Connection&) const = default;
    };
    std::vector<Connection> connections;  // sorted by address, port, protocol

    // For a path in the lists above: the process that made the access (its command line), then its
    // parents' up to the task's command, when the recorder saw them (report's "processes"). Not a kind.
    std::map<std::string, std::vector<std::string>> processes;
    // For a package in hoisted_packages: the version installed, and the installed packages whose files the
    // task read that import it without depending on it (report's "hoistedImporters"), which pnpm's
    // packageExtensions can make depend on it. Not a kind.
    struct HoistedImport {
        std::string installed;                 // "3.3.0"
        std::vector<std::string> imported_by;  // "minipass@3.3.6", sorted
    };
    std::map<std::string, HoistedImport> hoisted_importers;

    // Each list sorted and unique.
    void normalise();
    bool empty() const;
    // empty() but for the kinds `forgiven`: what a caller does not count against the task (temporary
    // files, replaced reads...), without a copy of the findings to clear them in.
    using List = std::vector<std::string> TaskFindings::*;
    bool empty_but(std::initializer_list<List> forgiven) const;
    // Whether the task did what enforce would refuse (rules::enforce_allows by kind): anything but
    // unkeyed reads, writes in .git and installed packages.
    bool went_beyond() const;
    // Whether enforce refused it anything in the workspace (a read, a write, a call, a read of a file made
    // again): a task that goes on after a refusal may take another branch, so its result is not cached.
    bool refused() const;
    bool read_packages() const { return !unkeyed_packages.empty() || !hoisted_packages.empty(); }
};

enum class TaskStatus { audited, restored, not_audited, unsandboxed, refused, enforced };

// "audited", "restored", "notAudited", "unsandboxed", "refused", "enforced"
const char* status_name(TaskStatus status);
// The status `status_name` calls so; nullopt for any other name.
std::optional<TaskStatus> parse_status(std::string_view name);

struct TaskAudit {
    std::string task;  // "project:target"
    TaskStatus status = TaskStatus::audited;
    std::string reason;  // why not audited, unsandboxed or refused; empty otherwise
    TaskFindings findings;  // only for audited and enforced tasks
    std::string project_root;  // workspace-relative, "." for the root project: for suggestions' tokens
    // The root of each project in findings.dependency_reads, by name: for `^` ignoreReads suggestions.
    std::map<std::string, std::string> dependency_roots;
    std::string hash;  // its declared key's hash; "" when it could not be computed
    Provenance provenance;
    // Restored from a remote cache with the record the sandbox made where it ran (its status, findings
    // and provenance are that machine's): so a run restored from a shared cache still audits every task.
    bool from_remote_cache = false;
    // Read back from a report (qk report merge): the suggestions it gave, since the roots above that
    // make them are not in it. nullopt for a task audited in this run: audit::suggest gives them.
    std::optional<std::vector<Suggestion>> given_suggestions;
    // Its own declared input files that at least nx.json's qk.inputsNeverReadAfterRuns runs recorded with
    // --record held in its key and none read, sorted (key::InputUseStore): a candidate to narrow the key,
    // never a finding.
    std::vector<std::string> inputs_never_read;
    // Set by the sandbox (src/sandbox), not in the report: its commands failed (a non-zero exit, a signal).
    // Under enforce the summary names such a task first, with what was refused, even when nothing it
    // did is listed: a run that failed on a refusal must say which task and why.
    bool failed = false;
    // Set by the runner under enforce: its declared outputs that name one file (a path, not a glob, with
    // an extension), workspace-relative. Held by Landlock alone a missing one cannot be created: a
    // refused write of one is answered with its directory as the output instead.
    std::vector<std::string> file_outputs;
    // Set by the runner under enforce: every declared output naming one path (no pattern), file outputs
    // included. Held by Landlock alone, which grants what lies beneath a directory but not the directory
    // itself, a refused removal or rename of one (or of a directory holding one, as a tool clearing its
    // output) needs the overlay: declaring it again would change nothing.
    std::vector<std::string> output_paths;
    // Set by the runner under enforce: those of findings.refused_writes that are symbolic links the task
    // left where it may write, pointing away (out of the workspace, or where it may not write), which the
    // overlay did not apply; by path, their targets. Nothing to declare: the summary says so.
    std::map<std::string, std::string> refused_links;
    // Its project's name (a target's name may hold colons, so the id alone does not say where it ends);
    // "" when not known, as in a report written before it was kept.
    std::string project;
};

// Whether the task's result can be shared as verified (a remote cache's upload and trust policies): the
// sandbox saw all it did (audited, or held by enforce, with nothing lost) and found nothing its key might
// miss or its outputs leave out. Only what leaves the result whole is forgiven: temporary files, reads
// refused because another task made the file again, probes outside the workspace. A kind added later
// counts against it until it is named here.
bool verified(const TaskAudit& task);

struct PathCount {
    std::string path;
    std::size_t tasks = 0;  // how many tasks read it
    // read_by_many: it was a TypeScript configuration read (tsconfigReads) in some task, so the summary
    // keeps that finding's wording: a root tsconfig a package's `extends` reads is an input, not noise.
    bool tsconfig = false;
    // The tasks that read it, sorted: the summary names them (a count alone says nothing at 40 tasks).
    std::vector<std::string> task_ids;
};

// What the summary and the report advise declaring once, in nx.json, rather than in each target: a path
// many tasks read (read_by_many), a version or package manager's configuration at the workspace root or
// read by many, or the same file read in many sibling directories (packages/*/tsconfig.json, as one tool
// scanning the workspace reads them), as one glob. Never a name made for one run (a timestamp in it).
struct SharedRead {
    std::string path;        // workspace-relative: a file, or a glob with "*" segments (sibling_match)
    std::size_t files = 1;   // the files read that it stands for
    std::vector<std::string> task_ids;  // the audited tasks that read any of them, sorted
    bool tsconfig = false;   // a TypeScript configuration read (tsconfigReads) in some task
    bool toolchain = false;  // a version or package manager's configuration (toolchainReads)
    bool manifest = false;   // workspace packages' package.json (manifestReads), read by any task
};

// Everything one run's audit found, as the summary and the report show it.
struct RunAudit {
    std::string mode = "audit";
    std::optional<std::string> recorder;  // "ebpf", "strace"; nullopt when no task was recorded
    std::string no_recorder;              // why no recorder works here (auto found none), else empty
    // Under enforce: the Landlock ABI used, and why tasks are held by Landlock alone (no overlay), if so.
    int landlock_abi = 0;
    std::string landlock_only;
    std::size_t stale_sandboxes = 0;  // sandbox directories of killed runs that this run removed
    std::vector<TaskAudit> tasks;         // the tasks that started or were restored, sorted by task id
    // With auto, why the eBPF recorder was not used when strace records instead; else empty.
    std::string recorder_fallback;
    RunIdentity run;
    // A merge of shards' reports: tasks met with different hashes on different shards, by id, each
    // record once, sorted by hash. They are not in `tasks`.
    std::map<std::string, std::vector<TaskAudit>> conflicts;

    struct Counts {
        std::size_t tasks = 0, audited = 0, went_beyond = 0, restored = 0, not_audited = 0, unsandboxed = 0,
                    refused = 0, enforced = 0;
    };
    // Derived from `tasks` by finish().
    Counts counts;
    // Paths in readsOutsideInputs or tsconfigReads of at least 3 tasks and at least a quarter of those
    // that went beyond (rounded up); sorted by path.
    std::vector<PathCount> read_by_many;
    std::vector<PathCount> unkeyed_reads;    // each .git or dotenv file read, with how many tasks read it
    std::vector<PathCount> manifest_reads;   // each workspace package.json read
    std::vector<PathCount> toolchain_reads;  // each toolchain configuration file read
    std::size_t git_writers = 0;             // tasks that wrote in .git
    // Installed packages (in unkeyedPackages or hoistedPackages) read by at least 3 tasks and at least a
    // quarter of those that read any; `path` holds the package's name. Sorted by name.
    std::vector<PathCount> packages_read_by_many;
    // What to declare once in nx.json (see SharedRead), sorted by path. Each task's findings still list
    // the files; the summary leaves them out of its lines and says them once.
    std::vector<SharedRead> shared_reads;

    // Sorts the tasks and computes the derived fields above.
    void finish();
    // The shared read that covers `path` (the file, or a glob matching it), if any.
    const SharedRead* shared(std::string_view path) const;
};

}  // namespace qk::audit
