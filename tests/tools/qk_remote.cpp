// qk-remote: the remote cache's client on its own, configured by QK_REMOTE_CACHE_* as qk is, for
// tests/e2e/test_remote_cache.py to drive against real servers.
//
//   qk-remote put KEY FILE           store FILE as the entry KEY
//   qk-remote get KEY FILE           the entry KEY into FILE (written as FILE.part, renamed on a hit)
//   qk-remote exists KEY             whether the server holds KEY
//   qk-remote put-all DIR KEY...     put DIR/KEY for each KEY, one thread each, all at once
//   qk-remote get-all DIR KEY...     get each KEY into DIR/KEY, one thread each, all at once
//
// Prints "hit", "miss" or "stored" (one line per key for the -all forms). Exit codes: 0 hit or stored,
// 1 miss, 2 usage, settings or a local file; each fault its own: 10 unreachable, 11 timeout,
// 12 forbidden, 13 server, 14 truncated, 15 tampered, 16 protocol (the -all forms: the first key's that
// was not 0).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "qk/remote/remote_cache.hpp"
#include "qk/util/io.hpp"
#include "qk/util/settings.hpp"
#include "qk/util/unique_fd.hpp"

namespace {

using namespace qk;

int exit_code(const Error& e)
{
    switch (e.kind) {
    case ErrorKind::remote_unreachable:
        return 10;
    case ErrorKind::remote_timeout:
        return 11;
    case ErrorKind::remote_forbidden:
        return 12;
    case ErrorKind::remote_server:
        return 13;
    case ErrorKind::remote_truncated:
        return 14;
    case ErrorKind::remote_tampered:
        return 15;
    case ErrorKind::remote_protocol:
        return 16;
    case ErrorKind::remote_too_large:
        return 17;
    default:
        return 2;
    }
}

int fail(const Error& e)
{
    std::fprintf(stderr, "qk-remote: %s\n", e.message.c_str());
    return exit_code(e);
}

// Each outcome's line is printed whole, so lines of threads do not mix.
int report(const std::string& key, const char* outcome, int code)
{
    std::printf("%s%s%s\n", key.empty() ? "" : key.c_str(), key.empty() ? "" : " ", outcome);
    return code;
}

int put(const remote::RemoteCache& cache, const std::string& key, const std::string& file, bool named)
{
    const UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
    struct stat st {};
    if (!fd.valid() || ::fstat(fd.get(), &st) != 0)
        return fail(sys_error(file));
    if (auto s = cache.put(key, remote::file_source(fd.get(), static_cast<std::uint64_t>(st.st_size))); !s)
        return fail(s.error());
    return report(named ? key : "", "stored", 0);
}

int get(const remote::RemoteCache& cache, const std::string& key, const std::string& file, bool named)
{
    const std::string part = file + ".part";
    const UniqueFd fd(::open(part.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd.valid())
        return fail(sys_error(part));
    auto got = cache.get(key, [&fd](std::string_view chunk) { return write_all(fd.get(), chunk); });
    if (!got || *got == remote::Lookup::miss) {
        (void)::unlink(part.c_str());  // what arrived is no entry; a failed unlink leaves a stray .part only
        return got ? report(named ? key : "", "miss", 1) : fail(got.error());
    }
    if (::rename(part.c_str(), file.c_str()) != 0)
        return fail(sys_error("rename " + part));
    return report(named ? key : "", "hit", 0);
}

// put-all and get-all: each key on its own thread against the one client.
template <class F>
int all(const std::vector<std::string>& keys, F&& one)
{
    std::vector<int> codes(keys.size());
    std::vector<std::thread> threads;
    threads.reserve(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i)
        threads.emplace_back([&, i] { codes[i] = one(keys[i]); });
    for (auto& t : threads)
        t.join();
    for (const int c : codes)
        if (c != 0)
            return c;
    return 0;
}

int usage()
{
    std::fprintf(stderr, "usage: qk-remote put KEY FILE | get KEY FILE | exists KEY | put-all DIR KEY... | "
                         "get-all DIR KEY...\n");
    return 2;
}

}  // namespace

int main(int argc, char** argv)
{
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (args.size() < 2)
        return usage();
    auto settings = Settings::read();
    if (!settings)
        return fail(settings.error());
    auto server = remote::merge_server(settings->remote_cache);
    if (!server)
        return fail(server.error());
    auto cache = remote::make_remote_cache(*server);
    if (!cache)
        return fail(cache.error());
    const remote::RemoteCache& c = **cache;
    const std::string& cmd = args[0];
    if (cmd == "exists" && args.size() == 2) {
        auto found = c.exists(args[1]);
        if (!found)
            return fail(found.error());
        return *found == remote::Lookup::hit ? report("", "hit", 0) : report("", "miss", 1);
    }
    if (cmd == "put" && args.size() == 3)
        return put(c, args[1], args[2], false);
    if (cmd == "get" && args.size() == 3)
        return get(c, args[1], args[2], false);
    const std::vector<std::string> keys(args.begin() + std::min<std::ptrdiff_t>(2, args.size()), args.end());
    if (cmd == "put-all" && !keys.empty())
        return all(keys, [&](const std::string& k) { return put(c, k, args[1] + "/" + k, true); });
    if (cmd == "get-all" && !keys.empty())
        return all(keys, [&](const std::string& k) { return get(c, k, args[1] + "/" + k, true); });
    return usage();
}
