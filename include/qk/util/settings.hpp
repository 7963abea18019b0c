// Settings: every environment variable that changes what qk does (QK_*, NX_* and the system's TMPDIR,
// HOME, XDG_CACHE_HOME), read once where a program starts and passed down, so that no library reads
// the environment behind its caller's back. docs/environment.md lists each.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "qk/util/result.hpp"

namespace qk {

// How a variable is looked up: the process's environment, or a test's map.
using EnvLookup = std::function<const char*(const char*)>;
const char* process_env(const char* name);

struct RecorderSettings {
    std::optional<std::uint64_t> ring_bytes;  // QK_RING_BUFFER_BYTES
    bool io_uring_tracepoint = true;          // QK_EBPF_IO_URING_TRACEPOINT=0: as a kernel without it
    bool debug_bpf = false;                   // QK_DEBUG_BPF: libbpf's log and each program's size
};

struct SandboxSettings {
    bool read_mask = true;        // QK_SANDBOX_READ_MASK=0: enforce without its read mask
    bool mirror = true;           // QK_SANDBOX_MIRROR=0: each command's read mask mirrors refused directories itself
    bool overlay = true;          // QK_SANDBOX_OVERLAY=0: enforce by Landlock alone
    bool serve = true;            // QK_SANDBOX_SERVE=0: a qk-sandbox-exec exec'd for each command, not forked by the run's
    std::string exec;             // QK_SANDBOX_EXEC: the qk-sandbox-exec to run, else the one beside qk
    std::string dir;              // QK_SANDBOX_DIR: where sandboxes are made, else the first that works
    std::string tmpdir = "/tmp";  // TMPDIR
    std::string cache_home;       // XDG_CACHE_HOME (absolute, else empty)
    std::string home;             // HOME (absolute, else empty)
};

struct RunSettings {
    std::optional<unsigned> parallel;  // NX_PARALLEL
    bool skip_nx_cache = false;        // NX_SKIP_NX_CACHE=true
};

// The remote cache's server as the environment sets it (src/remote, docs/remote-cache.md). The protocol's
// name and the URL are checked, and merged with nx.json's, by remote::merge_server. `url` empty: unset.
struct RemoteCacheSettings {
    std::string url;            // QK_REMOTE_CACHE_URL, as set
    std::string protocol;       // QK_REMOTE_CACHE_PROTOCOL, as set; empty: nx.json's, else turbo
    std::string token;          // QK_REMOTE_CACHE_TOKEN: a secret, never printed nor put in a message
    std::string team;           // QK_REMOTE_CACHE_TEAM (turbo: team_... is a teamId, else a slug)
    std::string signature_key;  // QK_REMOTE_CACHE_SIGNATURE_KEY (turbo only): a secret as the token
    unsigned connect_timeout_s = 10;  // QK_REMOTE_CACHE_CONNECT_TIMEOUT
    unsigned stall_timeout_s = 30;    // QK_REMOTE_CACHE_STALL_TIMEOUT: no byte moved for this long
};

// The local cache (.qk/cache). The limit counts what an entry takes on disk (allocated blocks), not the
// files' sizes: a sparse file is stored sparse, so its holes cost nothing (docs/environment.md says why).
struct CacheSettings {
    static constexpr std::uint64_t kDefaultMaxEntryBytes = std::uint64_t{4} << 30;  // 4 GiB
    std::uint64_t max_entry_bytes = kDefaultMaxEntryBytes;  // QK_CACHE_MAX_ENTRY_SIZE; "off": no limit (max)
};

// A size as people write one: "4GiB", "4G", "500MiB", "500M", "64KiB", "1048576" (bytes); the units are
// binary (1G = 1 GiB) and their case does not matter; "off" is no limit (UINT64_MAX). An Error names
// `name`, the value and what it takes.
Result<std::uint64_t> parse_byte_size(std::string_view name, std::string_view value);

// `url` without the user and password it may hold (http://user:pass@host/ -> http://host/), for messages.
std::string url_without_credentials(const std::string& url);

struct Settings {
    RecorderSettings recorder;
    SandboxSettings sandbox;
    RunSettings run;
    RemoteCacheSettings remote_cache;
    CacheSettings cache;
    std::string recorder_choice;  // QK_RECORDER: auto, ebpf or strace (parsed by the command), else empty
    bool record_audit = false;    // QK_RECORD=audit: every run-many as with --record --sandbox
    bool trace_timings = false;   // QK_TRACE_TIMINGS: qk-trace's phases on stderr
    // What these were read from: a report's run identity (QK_RUN_ID, QK_SHARD and the CIs' own
    // variables, report/run_identity.hpp) is read through it.
    EnvLookup env = process_env;

    // An Error names the variable, its value and what it takes.
    static Result<Settings> read(const EnvLookup& env = process_env);
};

}  // namespace qk
