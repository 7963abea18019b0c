// Where a report's tasks were seen: the run a report belongs to (shards of one CI run share its id and
// commit) and, per task, the machine and the means that saw it, so a report merged from several
// machines shows an eBPF recording on one beside an strace recording on another.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace qk::audit {

struct Provenance {
    std::optional<std::string> shard;     // QK_SHARD, else the CI's job index; nullopt when none is known
    std::string host;                     // the machine's host name
    std::string kernel;                   // its kernel release (uname -r)
    std::optional<std::string> recorder;  // "ebpf", "strace"; nullopt when the task was not recorded
    int landlock_abi = 0;                 // the Landlock ABI its kernel offers; 0 for none
    std::optional<bool> overlay;          // under enforce: held over an overlay (or by Landlock alone)
    std::uint64_t lost_events = 0;        // events the recorder lost while the task ran

    friend bool operator==(const Provenance&, const Provenance&) = default;
};

struct RunIdentity {
    std::string id;       // QK_RUN_ID, else the CI's run (GITHUB_RUN_ID-GITHUB_RUN_ATTEMPT, ...), else made up
    std::string id_from;  // the variable it came from, or "local" for one made up for this run alone
    std::optional<std::string> commit;  // the commit checked out, when known
    // The shards whose tasks a report holds, sorted: one for a machine's own report, all for a merge.
    std::vector<std::optional<std::string>> shards;

    friend bool operator==(const RunIdentity&, const RunIdentity&) = default;
};

}  // namespace qk::audit
