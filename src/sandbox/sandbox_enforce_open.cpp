// SandboxEnforce's run-wide part: the probe and the run's sandbox directory as the run opens, the run's
// mirror of the workspace (root), the outputs the run's tasks may write, and the janitor that frees
// command layers off the critical path. Each task's plan and what it did: sandbox_enforce.cpp.
#include "sandbox_enforce.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "qk/enforce/base_registry.hpp"
#include "qk/enforce/probe.hpp"
#include "qk/enforce/probe_cache.hpp"
#include "qk/enforce/run_mirror.hpp"
#include "qk/key/outputs.hpp"
#include "qk/sandbox/sandbox_exec_path.hpp"
#include "qk/util/path_within.hpp"
#include "qk/workspace/glob.hpp"

namespace qk::sandbox {

namespace fs = std::filesystem;

namespace {

// Where this run keeps its commands' sandboxes, and where another run (of this workspace or another)
// would: each that exists, canonical, for the helper to keep from the command.
std::vector<std::string> sandbox_bases(const enforce::SandboxDir::Bases& bases, const std::vector<std::string>& registered,
                                       const std::filesystem::path& own)
{
    std::vector<std::filesystem::path> all{own};
    if (bases.chosen)
        all.push_back(*bases.chosen);
    all.insert(all.end(), bases.candidates.begin(), bases.candidates.end());
    all.insert(all.end(), registered.begin(), registered.end());
    std::vector<std::string> out;
    for (const auto& p : all) {
        std::error_code ec;
        auto real = std::filesystem::canonical(p, ec);
        if (!ec && std::filesystem::is_directory(real, ec) &&
            std::find(out.begin(), out.end(), real.string()) == out.end())
            out.push_back(real.string());
    }
    return out;
}

// Whether the system's temporary directory holds the workspace: Landlock cannot then allow what tools
// create there without allowing the workspace, so each command gets a temporary directory of its own.
bool workspace_in_tmp(const std::string& root, const std::string& tmpdir)
{
    std::error_code ec;
    fs::path tmp = fs::canonical(tmpdir, ec);
    if (ec)
        return false;
    return is_within(root, tmp.native());
}

// Where the run's tasks may write, workspace-relative: each output path, or a glob's literal leading
// directories. What appears there while a task runs, written by a task beside it, stays out of a read
// mask that does not allow it (an output applied into a directory the task sees in part).
std::vector<std::string> run_outputs(key::Session& session)
{
    std::vector<std::string> out;
    for (const workspace::Task& t : session.tasks().tasks()) {
        auto outputs = key::resolve_outputs(session.workspace().projects()[t.project], *t.target, t.configuration);
        if (!outputs)
            continue;  // the task's own key fails with this error when it starts
        for (const std::string& p : outputs->paths) {
            if (p.starts_with('!'))
                continue;
            auto glob = workspace::Glob::compile(p);
            std::string path = glob ? std::string(glob->literal_prefix()) : p;
            if (!path.empty())
                out.push_back(std::move(path));
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace

Result<std::unique_ptr<SandboxEnforce>> SandboxEnforce::open(record::RecorderChoice choice, key::Session& session,
                                                             const Settings& settings)
{
    std::unique_ptr<SandboxEnforce> self(new SandboxEnforce(session));
    QK_TRY_STATUS(self->open_common(choice, settings.recorder, "enforce"));
    QK_TRY(helper, sandbox_exec_path(settings.sandbox));
    self->helper_ = std::move(*helper);
    // Only a recorder that starts commands through it can use it: strace must be the command's parent.
    if (settings.sandbox.serve && self->recorder_ && self->recorder_->takes_starter())
        self->server_ = std::make_unique<HelperServer>(self->helper_);
    const std::string& root = session.workspace().root();
    const auto bases = enforce::SandboxDir::bases(settings.sandbox, root);
    QK_TRY(registry, enforce::BaseRegistry::open(enforce::BaseRegistry::home()));
    self->registry_.emplace(std::move(*registry));
    QK_TRY(dir, enforce::SandboxDir::create(root, bases));
    QK_TRY_STATUS(self->registry_->add(dir->base()));
    // A run's layers go only where no live run's command can reach them, else where every run keeps its
    // commands from (the registry's home). Without root a task runs as the user who owns every run's
    // layers; as root the run directory is hidden, but not from a command that keeps capabilities.
    {
        QK_TRY(covered, self->registry_->covered_by_live_runs(dir->base(),
                                                              enforce::SandboxDir::can_hide_from_commands()));
        if (!*covered) {
            QK_TRY(home, enforce::SandboxDir::create(root, {self->registry_->dir(), {}}));
            self->sandbox_note_ = fmt::format(
                "qk: this run keeps its sandboxes in {}, not {}: a run of yours that started before {} was first "
                "used could reach them there\n",
                home->base().string(), dir->base().string(), dir->base().string());
            *dir = std::move(*home);
        }
    }
    self->dir_.emplace(std::move(*dir));
    self->audit_.stale_sandboxes = self->dir_->removed().size();

    // The probe's verdict, kept for the boot where nothing it depends on changed (probe_cache.hpp): the
    // probe costs a run 70-370 ms, nearly all of it waiting for its test mounts to go.
    self->probe_cache_ = enforce::ProbeCache::here(self->registry_->dir(), self->helper_, root,
                                                   self->dir_->base().string());
    std::optional<enforce::ProbeReport> kept = self->probe_cache_ ? self->probe_cache_->load() : std::nullopt;
    Result<enforce::ProbeReport> report = kept ? Result<enforce::ProbeReport>(std::move(*kept)) : self->probe(root);
    if (!report)
        return error("--sandbox=enforce cannot tell what this machine allows: " + report.error().message);
    if (!report->landlock()) {
        auto failed = report->first_failure();
        return error(fmt::format("--sandbox=enforce needs Landlock (Linux 5.13 or later, with landlock among the "
                                 "kernel's lsm= modules){}; use --sandbox (audit) here",
                                 failed && failed->stage == "landlock" ? ": " + failed->message : std::string()));
    }
    self->audit_.landlock_abi = report->landlock_abi;
    self->read_mask_ = report->read_mask() && settings.sandbox.read_mask;
    if (!settings.sandbox.overlay) {
        self->overlay_ = false;
        self->audit_.landlock_only = "QK_SANDBOX_OVERLAY=0";
    } else if (!report->overlay()) {
        self->overlay_ = false;
        auto failed = report->first_failure();
        self->audit_.landlock_only = failed ? fmt::format("the overlay cannot be mounted ({}): {}", failed->stage,
                                                          failed->message)
                                            : "the overlay cannot be mounted";
    }
    // Root's commands held by Landlock alone run in a user namespace of their own, which keeps their
    // capabilities from every run's sandbox directory; where the probe could not make one, say so.
    if (!self->overlay_ && ::geteuid() == 0) {
        int mapped = 0;
        for (const enforce::ProbeStep& step : report->steps) {
            if (step.stage != "userns" && step.stage != "uid_map")
                continue;
            if (step.ok) {
                ++mapped;
                continue;
            }
            self->audit_.landlock_only += "; root's commands keep their capabilities over the host's files (no "
                                          "user namespace: " + step.message + "); other runs keep their layers "
                                          "out of their reach (docs/sandbox.md)";
            break;
        }
        self->user_namespace_ = mapped == 2;
    }
    self->note_network_namespace(*report);
    // Over the overlay a command's directories hold its upper layer. Under Landlock alone they hold none,
    // and the command reaches its private temporary directory there by its path (no mount namespace
    // binds it back).
    if (self->overlay_)
        QK_TRY_STATUS(self->dir_->hide_from_commands());
    self->private_tmp_ = workspace_in_tmp(root, settings.sandbox.tmpdir);
    QK_TRY(registered, self->registry_->bases());
    self->covers_ = sandbox_bases(bases, *registered, self->dir_->base());
    QK_TRY_STATUS(self->registry_->publish(self->covers_, ::geteuid() == 0 && !self->overlay_ &&
                                                              !self->user_namespace_));
    if (self->read_mask_) {
        self->run_outputs_ = run_outputs(session);
        // As root, refused directories point at one mirror of the workspace's names made here for the
        // run, rather than each command mirroring them (what a mask costs would follow the workspace's
        // size). Without it, or where it cannot be made, each command's mask mirrors them itself.
        if (self->overlay_ && report->mirror() && settings.sandbox.mirror) {
            if (auto mirror = enforce::RunMirror::create(root))
                self->mirror_.emplace(std::move(mirror).value());
        }
    }
    self->janitor_ = std::thread([s = self.get()] { s->janitor(); });
    return self;
}

SandboxEnforce::~SandboxEnforce()
{
    // Closing the mirror's detached mount waits for an RCU grace period (5-15 ms here): on a thread of its
    // own, beside the janitor's stop, rather than after it.
    std::thread mirror_closer;
    if (mirror_)
        mirror_closer = std::thread([m = std::move(mirror_)]() mutable { m.reset(); });
    mirror_.reset();
    {
        std::lock_guard lock(janitor_mutex_);
        stopping_ = true;
    }
    janitor_wake_.notify_all();
    if (janitor_.joinable())
        janitor_.join();
    if (mirror_closer.joinable())
        mirror_closer.join();
}

Result<enforce::ProbeReport> SandboxEnforce::probe(const std::string& root)
{
    QK_TRY(scratch, dir_->command_dirs());
    auto report = enforce::probe(helper_, root, scratch->upper.parent_path().string());
    // What the probe made is freed off the run's path, by the janitor (or with the run directory, if the
    // run ends first).
    remove_later(std::move(*scratch));
    if (report && probe_cache_)
        probe_cache_->store(*report);
    return report;
}

void SandboxEnforce::remove_later(enforce::SandboxDir::CommandDirs dirs)
{
    {
        std::lock_guard lock(janitor_mutex_);
        to_remove_.push_back(std::move(dirs));
    }
    janitor_wake_.notify_one();
}

void SandboxEnforce::janitor()
{
    dir_->remove_left_by_finished_runs([this] {
        std::lock_guard lock(janitor_mutex_);
        return stopping_;
    });
    std::unique_lock lock(janitor_mutex_);
    for (;;) {
        janitor_wake_.wait(lock, [&] { return stopping_ || !to_remove_.empty(); });
        // The run is ending: what is left goes with the run directory, which SandboxDir leaves to the next
        // run's janitor when it still holds layers (on ext4 with discard, each removal waited for here
        // cost the run's end milliseconds).
        if (stopping_ || to_remove_.empty())
            return;
        auto dirs = std::move(to_remove_.front());
        to_remove_.pop_front();
        lock.unlock();
        (void)dir_->remove(dirs);  // what is left goes with the run directory
        lock.lock();
    }
}

std::string SandboxEnforce::notice() const
{
    std::string recording = Sandbox::notice() + sandbox_note_;
    if (!audit_.landlock_only.empty())
        return recording + fmt::format("qk: enforce holds tasks by Landlock alone, as {}: a write outside a task's outputs fails "
                           "it as it happens\n",
                           audit_.landlock_only == "QK_SANDBOX_OVERLAY=0" ? "QK_SANDBOX_OVERLAY=0 asks"
                                                                          : audit_.landlock_only);
    return recording;
}

}  // namespace qk::sandbox
