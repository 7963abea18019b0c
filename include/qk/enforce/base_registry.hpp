// BaseRegistry: the user's record of every directory that holds runs' sandboxes, and of the runs that
// live now and which of those directories their commands are kept from. Without root a task runs as
// the user who owns every run's upper layers, so a run keeps its layers only where every live run's
// commands are kept from them.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "qk/util/result.hpp"
#include "qk/util/unique_fd.hpp"

namespace qk::enforce {

class BaseRegistry {
public:
    // /var/tmp/qk-sandbox-<uid>: a place every run of the user knows, whatever its environment or
    // workspace, and so covers from its commands; the registry lives in it.
    static std::filesystem::path home();

    // Makes the registry in `dir` (one of ours, no one else may write in it) and marks this run live,
    // before it reads what is registered: a base registered after that is one this run may not cover,
    // and the run that registered it sees so (covered_by_live_runs).
    static Result<BaseRegistry> open(const std::filesystem::path& dir);

    BaseRegistry(BaseRegistry&&) noexcept = default;
    BaseRegistry& operator=(BaseRegistry&&) noexcept;
    BaseRegistry(const BaseRegistry&) = delete;
    BaseRegistry& operator=(const BaseRegistry&) = delete;
    ~BaseRegistry();  // this run is no longer live: its mark goes

    const std::filesystem::path& dir() const { return dir_; }

    // Records `base` (canonical, existing) for every run that starts from now on to cover.
    Status add(const std::filesystem::path& base) const;
    // Every base recorded that exists now, canonical; forgets those that are gone.
    Result<std::vector<std::string>> bases() const;
    // Publishes what this run's commands are kept from (canonical directories), once, before its first
    // command; and whether they keep capabilities over the host's files (root's, under Landlock alone
    // where no user namespace could be made), which reach a run directory hidden from every other.
    Status publish(const std::vector<std::string>& covers, bool keep_capabilities) const;
    // Whether every other live run has published its covers and they hold `base`: no command of any of
    // them can reach a layer made there. A run that has not published yet counts as not covering it.
    // With `capable_only`, for a run directory hidden from commands, only runs whose commands keep
    // capabilities count.
    Result<bool> covered_by_live_runs(const std::string& base, bool capable_only) const;

private:
    BaseRegistry() = default;
    void destroy() noexcept;

    std::filesystem::path dir_;
    UniqueFd bases_fd_, live_fd_, mark_fd_;  // mark_fd_: this run's live mark, locked while it lives
    std::string mark_;
};

}  // namespace qk::enforce
