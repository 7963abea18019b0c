// Where a report comes from, read off the environment and the machine once per report.
#include "qk/report/run_identity.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <initializer_list>
#include <optional>

#include <fmt/format.h>

#include "qk/util/git.hpp"

namespace qk::report {
namespace {

std::optional<std::string> first_set(const EnvLookup& env, std::initializer_list<const char*> names)
{
    for (const char* name : names)
        if (const char* v = env(name); v && *v)
            return std::string(v);
    return std::nullopt;
}

std::string host_name()
{
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0 || !host[0])
        return "unknown";
    return host;
}

std::optional<std::string> git_head(const std::string& root)
{
    auto out = git(root, {"rev-parse", "--verify", "-q", "HEAD"});
    if (!out)
        return std::nullopt;  // no repository, no commit yet, or no git: the report says null
    std::string head = out->substr(0, out->find('\n'));
    if (head.empty())
        return std::nullopt;
    return head;
}

}  // namespace

audit::RunIdentity run_identity(const std::string& workspace_root, const EnvLookup& env)
{
    audit::RunIdentity run;
    // The CIs' own ids, so shards of one pipeline agree without being told; QK_RUN_ID first, as Nx's
    // NX_CI_EXECUTION_ID, for a CI named here or not.
    static constexpr std::pair<const char*, const char*> kIds[] = {
        {"QK_RUN_ID", nullptr},          {"GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT"}, {"CI_PIPELINE_ID", nullptr},
        {"BUILDKITE_BUILD_ID", nullptr}, {"CIRCLE_WORKFLOW_ID", nullptr},
    };
    for (const auto& [name, attempt] : kIds) {
        const char* v = env(name);
        if (!v || !*v)
            continue;
        run.id = v;
        run.id_from = name;
        // A re-run of the jobs of a workflow is another run: its reports must not merge with the first's.
        if (attempt)
            if (const char* a = env(attempt); a && *a)
                run.id += fmt::format("-{}", a);
        break;
    }
    if (run.id.empty()) {
        auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::system_clock::now().time_since_epoch());
        run.id = fmt::format("local-{}-{}-{}", host_name(), now.count(), ::getpid());
        run.id_from = "local";
    }
    run.shards = {first_set(env, {"QK_SHARD", "CI_NODE_INDEX", "BUILDKITE_PARALLEL_JOB", "CIRCLE_NODE_INDEX"})};
    run.commit = first_set(env, {"GITHUB_SHA", "CI_COMMIT_SHA", "BUILDKITE_COMMIT", "CIRCLE_SHA1"});
    if (!run.commit)
        run.commit = git_head(workspace_root);
    return run;
}

audit::Provenance machine_provenance(const audit::RunIdentity& run, int landlock_abi)
{
    audit::Provenance p;
    p.shard = run.shards.empty() ? std::nullopt : run.shards.front();
    p.host = host_name();
    struct utsname u {};
    p.kernel = ::uname(&u) == 0 ? u.release : "unknown";
    p.landlock_abi = landlock_abi;
    return p;
}

}  // namespace qk::report
