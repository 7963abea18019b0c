#include "doctor.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

#include "qk/enforce/probe.hpp"
#include "qk/enforce/sandbox_dir.hpp"
#include "qk/key/session.hpp"
#include "qk/record/launcher.hpp"
#include "qk/record/recorder.hpp"
#include "qk/remote/remote_check.hpp"
#include "qk/run/remote_policy.hpp"
#include "qk/run/scratch.hpp"
#include "qk/sandbox/sandbox_exec_path.hpp"
#include "qk/util/printable.hpp"

namespace qk::cli {

namespace {

DoctorCheck recorder_check(record::RecorderChoice choice, const RecorderSettings& settings, const char* name,
                           const char* fix)
{
    auto r = record::make_recorder(choice, settings);
    if (r && *r)
        return {name, true, true, fmt::format("the {} recorder can record here", name), {}};
    if (!r && r.error().sys_errno == EROFS)
        fix = record::read_only_groups_fix();
    return {name, false, true, r ? "not available" : r.error().message, fix};
}

// The groups the recorders start each command in (on Linux, cgroup2), as the launcher's platform checks them.
DoctorCheck command_groups_check()
{
    record::CommandGroupsCheck c = record::check_command_groups();
    return {std::move(c.name), c.ok, true, std::move(c.verdict), std::move(c.fix)};
}

bool is_dir(const char* path)
{
    struct stat st {};
    return ::stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

// The scratch directories of every target of the workspace, as a run would check them.
DoctorCheck scratch_check(key::Session& session)
{
    const auto& ws = session.workspace();
    std::vector<run::TaskScratch> all;
    std::vector<std::string> problems;
    std::size_t count = 0;
    for (const auto& project : ws.projects())
        for (const auto& target : project.targets) {
            std::string id = project.name + ":" + target.name;
            auto dirs = run::resolve_scratch(ws, project, target);
            if (!dirs) {
                problems.push_back(dirs.error().message);
                continue;
            }
            if (auto st = run::check_scratch(ws, *dirs); !st)
                problems.push_back(fmt::format("{}: {}", id, st.error().message));
            count += dirs->size();
            all.emplace_back(id, std::move(*dirs));
        }
    if (auto st = run::check_scratch_overlaps(all); !st)
        problems.push_back(st.error().message);
    if (problems.empty())
        return {"scratch", true, true, fmt::format("{} scratch {} of the workspace keep to the rules", count,
                                                   count == 1 ? "directory" : "directories"), {}};
    return {"scratch", false, true, fmt::format("{}", fmt::join(problems, "; ")),
            "change the target's \"qk:sandbox\": { \"scratch\": [...] } as the message says"};
}

// The remote cache a run here would use (the environment's, else nx.json's), tried as a run would meet it.
// Nothing named: no check, a remote cache being optional.
void remote_checks(DoctorReport& out, const key::Session* session, const Settings& settings)
{
    const workspace::RemoteCacheConfig nx = session ? session->workspace().nx().remote_cache
                                                    : workspace::RemoteCacheConfig{};
    auto policy = run::remote_policy(nx, settings.remote_cache, "");
    if (!policy) {
        out.checks.push_back({"remote-cache", false, true, policy.error().message,
                              "correct nx.json's qk.remoteCache or the QK_REMOTE_CACHE_* variables as it says"});
        out.remote_ok = false;
        return;
    }
    if (policy->server.url.empty())
        return;
    for (remote::RemoteCheck& c : remote::check_remote(policy->server, policy->write)) {
        out.remote_ok = out.remote_ok && c.ok;
        out.checks.push_back({std::move(c.name), c.ok && c.tried, c.tried, std::move(c.verdict), std::move(c.fix)});
    }
}

}  // namespace

DoctorReport doctor(const std::filesystem::path& directory, const Settings& settings)
{
    DoctorReport out;
    auto add = [&](DoctorCheck c) { out.checks.push_back(std::move(c)); };

    add(command_groups_check());
    add(recorder_check(record::RecorderChoice::ebpf, settings.recorder, "ebpf",
                       "run as root or with CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN, on a kernel with BTF "
                       "(/sys/kernel/btf/vmlinux); strace records otherwise"));
    add(recorder_check(record::RecorderChoice::strace, settings.recorder, "strace", "install strace (apt install strace)"));
    bool tracefs = is_dir("/sys/kernel/tracing/events") || is_dir("/sys/kernel/debug/tracing/events");
    add({"tracefs", tracefs, false, tracefs ? "mounted" : "not mounted (the eBPF recorder does not need it)",
         tracefs ? "" : "mount -t tracefs nodev /sys/kernel/tracing, for bpftool and perf"});

    std::unique_ptr<key::Session> session;
    std::filesystem::path root = std::filesystem::absolute(directory);
    if (auto s = key::Session::open(directory)) {
        session = std::move(*s);
        root = session->workspace().root();
    }

    auto helper = sandbox::sandbox_exec_path(settings.sandbox);
    std::optional<enforce::ProbeReport> probe;
    if (!helper) {
        add({"qk-sandbox-exec", false, true, helper.error().message, "install qk again"});
    } else if (auto dir = enforce::SandboxDir::create(root, enforce::SandboxDir::bases(settings.sandbox, root)); !dir) {
        add({"sandbox-dir", false, true, dir.error().message, "set QK_SANDBOX_DIR to a writable directory"});
    } else if (auto dirs = dir->command_dirs(); !dirs) {
        add({"sandbox-dir", false, true, dirs.error().message, "set QK_SANDBOX_DIR to a writable directory"});
    } else {
        auto report = enforce::probe(*helper, root.string(), dirs->upper.parent_path().string());
        (void)dir->remove(*dirs);
        if (!report)
            add({"probe", false, true, report.error().message, {}});
        else
            probe = std::move(*report);
    }
    if (probe) {
        for (const auto& step : probe->steps) {
            std::string verdict = step.ok ? "works" : step.message;
            if (step.stage == "landlock" && step.ok)
                verdict = fmt::format("ABI {}", probe->landlock_abi);
            add({step.stage, step.ok, step.stage == "landlock", verdict, {}});
        }
        // Tried inside the user namespace the overlay steps make: without one it is not tried, and a task
        // that declares its network is refused under enforce (docs/sandbox.md, "The network").
        if (!probe->network_namespace() &&
            std::none_of(probe->steps.begin(), probe->steps.end(), [](const auto& s) { return s.stage == "netns"; }))
            add({"netns", false, false,
                 "no network namespace without a user namespace: a task that declares its network is refused "
                 "under enforce",
                 {}});
    }

    auto passed = [&](std::string_view name) {
        return std::any_of(out.checks.begin(), out.checks.end(), [&](const DoctorCheck& c) { return c.name == name && c.ok; });
    };
    const bool ebpf = passed("ebpf"), strace = passed("strace");
    out.audit_works = ebpf || strace;
    out.audit = ebpf ? "audit works: tasks are recorded with eBPF"
                : strace ? "audit works: tasks are recorded with strace"
                         : "audit cannot record here: neither eBPF nor strace works";
    if (probe && probe->landlock()) {
        out.enforce_works = true;
        auto failed = probe->first_failure();
        out.enforce = probe->overlay() ? "enforce works: each command runs over an overlay, held by Landlock"
                                       : fmt::format("enforce works by Landlock alone (writes outside the outputs "
                                                     "fail as they happen): {}",
                                                     failed ? failed->message : "no overlay");
    } else {
        out.enforce = "enforce cannot work here: it needs Landlock (Linux 5.13 or later, landlock among lsm=)";
    }
    if (session) {
        add(scratch_check(*session));
        out.workspace_ok = out.checks.back().ok;
    }
    remote_checks(out, session.get(), settings);
    return out;
}

std::string doctor_text(const DoctorReport& report)
{
    std::string out = "qk doctor: what the sandbox can use here\n";
    for (const DoctorCheck& c : report.checks) {
        // A verdict may quote a task or a path of the workspace (a scratch directory that breaks the rules).
        out += fmt::format("  {:<5} {:<18} {}\n", c.ok ? "ok" : (c.needed ? "FAIL" : "--"), c.name,
                           printable(c.verdict));
        if (!c.ok && !c.fix.empty())
            out += fmt::format("  {:<5} {:<18} fix: {}\n", "", "", printable(c.fix));
    }
    out += report.audit + "\n" + report.enforce + "\n";
    return out;
}

}  // namespace qk::cli
