#include "qk/util/settings.hpp"

#include <cstdlib>
#include <string_view>

#include <fmt/format.h>

namespace qk {
namespace {

// A switch that is on unless set to 0.
bool not_zero(const char* v) { return !(v && std::string_view(v) == "0"); }

Result<std::uint64_t> ring_bytes(const char* v)
{
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 0);
    if (!*v || !end || *end || n < 4096 || (n & (n - 1)))
        return error(fmt::format("QK_RING_BUFFER_BYTES='{}' must be a number of bytes that is a power of two "
                                 "of at least 4096, such as 16777216 (16 MiB; the default is 4 MiB)",
                                 v));
    return static_cast<std::uint64_t>(n);
}

Result<unsigned> parallel(const char* v)
{
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (!end || *end || n < 1 || n > 10000)
        return error(fmt::format("NX_PARALLEL='{}' is not a number of tasks (1 or more): unset it or give one", v));
    return static_cast<unsigned>(n);
}

}  // namespace

const char* process_env(const char* name) { return std::getenv(name); }

Result<Settings> Settings::read(const EnvLookup& env)
{
    auto set = [&env](const char* name) -> const char* {
        const char* v = env(name);
        return v && *v ? v : nullptr;
    };
    auto absolute = [&set](const char* name) {
        const char* v = set(name);
        return v && *v == '/' ? std::string(v) : std::string();
    };
    Settings s;
    s.env = env;
    if (const char* v = set("QK_RING_BUFFER_BYTES")) {
        QK_TRY(bytes, ring_bytes(v));
        s.recorder.ring_bytes = *bytes;
    }
    s.recorder.io_uring_tracepoint = not_zero(env("QK_EBPF_IO_URING_TRACEPOINT"));
    s.recorder.debug_bpf = env("QK_DEBUG_BPF") != nullptr;

    s.sandbox.read_mask = not_zero(env("QK_SANDBOX_READ_MASK"));
    s.sandbox.overlay = not_zero(env("QK_SANDBOX_OVERLAY"));
    if (const char* v = set("QK_SANDBOX_EXEC"))
        s.sandbox.exec = v;
    if (const char* v = set("QK_SANDBOX_DIR"))
        s.sandbox.dir = v;
    if (const char* v = set("TMPDIR"))
        s.sandbox.tmpdir = v;
    // The XDG spec: a relative value is invalid and ignored.
    s.sandbox.cache_home = absolute("XDG_CACHE_HOME");
    s.sandbox.home = absolute("HOME");

    if (const char* v = set("NX_PARALLEL")) {
        QK_TRY(n, parallel(v));
        s.run.parallel = *n;
    }
    if (const char* v = env("NX_SKIP_NX_CACHE"))
        s.run.skip_nx_cache = std::string_view(v) == "true";

    if (const char* v = set("QK_RECORDER"))
        s.recorder_choice = v;
    if (const char* v = set("QK_RECORD")) {
        if (std::string_view(v) != "audit")
            return error(fmt::format("QK_RECORD={}: the only value is audit (record each task for the cache and "
                                     "audit it from that recording); unset it to record nothing",
                                     v));
        s.record_audit = true;
    }
    s.trace_timings = env("QK_TRACE_TIMINGS") != nullptr;
    return s;
}

}  // namespace qk
