#include "qk/util/settings.hpp"

#include <cstdlib>
#include <limits>
#include <string_view>
#include <utility>

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

// A number of seconds for a remote cache's timeout.
Result<unsigned> seconds(const char* name, const char* v)
{
    char* end = nullptr;
    const unsigned long n = std::strtoul(v, &end, 10);
    if (*v < '0' || *v > '9' || !end || *end || n < 1 || n > 3600)  // strtoul would take " 5" and "-1"
        return error(fmt::format("{}='{}' must be a number of seconds from 1 to 3600", name, v));
    return static_cast<unsigned>(n);
}

// What QK_REMOTE_CACHE_* say, as set: the protocol's name and the URL are checked where they meet
// nx.json's (remote::merge_server), the same whichever source gives them.
Result<RemoteCacheSettings> read_remote_cache(const std::function<const char*(const char*)>& set)
{
    RemoteCacheSettings r;
    if (const char* v = set("QK_REMOTE_CACHE_PROTOCOL"))
        r.protocol = v;
    if (const char* v = set("QK_REMOTE_CACHE_CONNECT_TIMEOUT")) {
        QK_TRY(n, seconds("QK_REMOTE_CACHE_CONNECT_TIMEOUT", v));
        r.connect_timeout_s = *n;
    }
    if (const char* v = set("QK_REMOTE_CACHE_STALL_TIMEOUT")) {
        QK_TRY(n, seconds("QK_REMOTE_CACHE_STALL_TIMEOUT", v));
        r.stall_timeout_s = *n;
    }
    if (const char* v = set("QK_REMOTE_CACHE_TOKEN"))
        r.token = v;
    if (const char* v = set("QK_REMOTE_CACHE_TEAM"))
        r.team = v;
    if (const char* v = set("QK_REMOTE_CACHE_SIGNATURE_KEY"))
        r.signature_key = v;
    if (const char* v = set("QK_REMOTE_CACHE_URL"))
        r.url = v;
    return r;
}

}  // namespace

Result<std::uint64_t> parse_byte_size(std::string_view name, std::string_view value)
{
    auto refused = [&] {
        return error(fmt::format("{}='{}' must be a size such as 4GiB, 500MiB or 1048576 (bytes; K, M, G, T are "
                                 "binary units), or off for no limit",
                                 name, value));
    };
    std::string lower;
    for (char c : value)
        lower += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    if (lower == "off")
        return std::numeric_limits<std::uint64_t>::max();
    std::size_t digits = 0;
    std::uint64_t n = 0;
    for (; digits < lower.size() && lower[digits] >= '0' && lower[digits] <= '9'; ++digits) {
        if (n > (std::numeric_limits<std::uint64_t>::max() - 9) / 10)
            return refused();
        n = n * 10 + static_cast<std::uint64_t>(lower[digits] - '0');
    }
    if (digits == 0 || n == 0)
        return refused();
    std::string_view unit = std::string_view(lower).substr(digits);
    if (unit.ends_with("ib"))
        unit.remove_suffix(2);
    else if (unit.size() > 1 && unit.ends_with('b'))
        unit.remove_suffix(1);
    int shift = 0;
    if (unit.empty() || unit == "b")
        shift = 0;
    else if (unit == "k")
        shift = 10;
    else if (unit == "m")
        shift = 20;
    else if (unit == "g")
        shift = 30;
    else if (unit == "t")
        shift = 40;
    else
        return refused();
    if (n > (std::numeric_limits<std::uint64_t>::max() >> shift))
        return refused();
    return n << shift;
}

std::string url_without_credentials(const std::string& url)
{
    const auto scheme_end = url.find("://");
    if (scheme_end == std::string::npos)
        return url;
    const auto host_start = scheme_end + 3;
    const auto authority_end = url.find_first_of("/?#", host_start);
    const auto at = url.rfind('@', authority_end == std::string::npos ? url.size() - 1 : authority_end - 1);
    if (at == std::string::npos || at < host_start)
        return url;
    return url.substr(0, host_start) + url.substr(at + 1);
}

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
    s.sandbox.mirror = not_zero(env("QK_SANDBOX_MIRROR"));
    s.sandbox.serve = not_zero(env("QK_SANDBOX_SERVE"));
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
    if (const char* v = set("QK_CACHE_MAX_ENTRY_SIZE")) {
        QK_TRY(bytes, parse_byte_size("QK_CACHE_MAX_ENTRY_SIZE", v));
        s.cache.max_entry_bytes = *bytes;
    }
    QK_TRY(remote, read_remote_cache(set));
    s.remote_cache = std::move(*remote);
    return s;
}

}  // namespace qk
