// Recording: what one traced command did, whichever recorder saw it: every path with what was done
// to it, the processes, and whether the recording is complete (and if not, why). It grows with the
// number of distinct paths, not with the number of events.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>
#include "qk/record/network_use.hpp"
#include "qk/util/string_hash.hpp"

namespace qk::record {

// What was done to a path; a path can collect several.
enum Access : std::uint16_t {
    kRead = 1 << 0,     // opened for reading (executables included)
    kWrite = 1 << 1,    // opened for writing, or truncated
    kCreate = 1 << 2,   // a file, directory or link that did not exist
    kRemove = 1 << 3,   // unlinked or removed
    kList = 1 << 4,     // a directory opened
    // An open-family call or exec that found nothing (ENOENT), and with Command::record_lookups a stat,
    // statx, access or faccessat that found nothing.
    kProbe = 1 << 5,
    // An open-family call or exec refused with EACCES or EPERM: the path exists but may not be opened
    // as asked (Landlock, file modes, a noexec mount, ...). Recorded only when Command::record_denials
    // asks. Neither read nor written: a consumer judging reads and writes looks at those bits only.
    // The path is canonical as a successful open's would be: the last component is followed, so a
    // refused open of a link names the file the link leads to (where the kernel checked permission;
    // the spelling through the link is kept as an alias). When that cannot be resolved (a dangling
    // link, a directory on the way the recorder cannot search either), the path stays as spelled.
    // EACCES may also come from a directory on the way that may not be searched, or from an O_CREAT
    // in a directory that may not be written: then the path named is the one asked for, which may not
    // exist. A change refused (unlink, rmdir, mkdir, rename, link, symlink, mknod, truncate) names the
    // path it would have changed, as spelled (both names of a rename, a link's new name); a link refused
    // (EACCES, EPERM, EOVERFLOW, and EXDEV: Landlock refusing a link across its rules) names its source
    // as a read refused (kDenied alone), since the link would have reached its content.
    kDenied = 1 << 6,
    // With kDenied: what was refused asked to change the path (an open for writing, creating or
    // truncating, or one of the changes above), not only to read it.
    kDeniedChange = 1 << 7,
    // The source of a hard link the task made (link, linkat): no data was read, but the file's content is
    // reachable by the new name (`ln secret /tmp/h; cat /tmp/h`), so a consumer judging reads counts it as
    // one. Named as the kernel resolved it: the last component followed only under AT_SYMLINK_FOLLOW.
    kLinked = 1 << 8,
};

struct Process {
    pid_t pid = 0;
    pid_t ppid = 0;
    std::vector<std::string> argv;  // the last successful exec's, empty if it never exec'd
    std::optional<int> exit_code;   // set when it exited normally
    std::optional<int> signal;      // set when a signal killed it
};

class Recording {
public:
    using PathMap = StringMap<std::uint16_t>;

    // Moved, never copied: first_pid_ views the keys of paths_, which a move carries along and a copy
    // would leave pointing into the original.
    Recording() = default;
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;
    Recording(Recording&&) = default;
    Recording& operator=(Recording&&) = default;

    // `pid`, when given, is the process that made the access: the first that reads, writes, creates,
    // removes, is refused or looks for a path is kept, to name it beside a finding or a refusal.
    void add(std::string_view path, std::uint16_t access, pid_t pid = 0);
    // The process that first read, wrote, created, removed, was refused or looked for `path` (as the
    // recorder gave the pid); 0 when not known.
    pid_t first_pid(std::string_view path) const;
    // `pid`'s command line, then each parent's up to the first process recorded (those that never
    // exec'd left out): what made an access, and from which of the task's commands.
    std::vector<std::string> command_chain(pid_t pid) const;
    void add_rename(std::string from, std::string to);
    // A path as the command spelled it (through a symlink) that resolves to `canonical`.
    void add_alias(std::string spelled, std::string canonical);
    // Leaves the first processes recorded (those whose parent was not recorded) out of command_chain:
    // a wrapper qk started the command through, as qk-sandbox-exec, is not the task's.
    void forget_root_commands();
    // The process with this pid, created on first use.
    Process& process(pid_t pid);
    void mark_incomplete(std::string reason);
    // Events the recorder lost (its ring buffer was full): the recording is incomplete too, and the
    // count goes into each task's provenance in the reports.
    void add_lost_events(std::uint64_t n) { lost_events_ += n; }
    std::uint64_t lost_events() const { return lost_events_; }
    // Adds everything `other` holds: a task's commands are each recorded apart, then merged into the
    // task's recording. Access bits add up; a pid in both (reused between commands) keeps the latest
    // command's process, `other`'s.
    void merge(const Recording& other);

    // A system call refused outright, by name (io_uring_setup, which enforce's seccomp filter refuses):
    // no path to name, but a refusal all the same.
    void add_refused_call(std::string name) { refused_calls_.insert(std::move(name)); }
    const std::set<std::string>& refused_calls() const { return refused_calls_; }

    // The connections it opened and the names it looked up (loopback included: the reports list it apart).
    NetworkUse& network() { return network_; }
    const NetworkUse& network() const { return network_; }

    bool complete() const { return incomplete_.empty(); }
    const std::vector<std::string>& incomplete_reasons() const { return incomplete_; }
    const PathMap& paths() const { return paths_; }
    // Every path with its accesses, sorted by path, pointing into this recording: one sort serves
    // every list of a report.
    std::vector<const PathMap::value_type*> sorted_paths() const;

    const std::set<std::pair<std::string, std::string>>& renames() const { return renames_; }
    const std::map<std::string, std::string, std::less<>>& aliases() const { return aliases_; }
    const std::map<pid_t, Process>& processes() const { return processes_; }

private:
    PathMap paths_;
    std::set<std::pair<std::string, std::string>> renames_;
    std::map<std::string, std::string, std::less<>> aliases_;
    std::map<pid_t, Process> processes_;
    // Views of paths_' keys (its nodes do not move): a path's first process costs no copy of the path.
    std::unordered_map<std::string_view, pid_t> first_pid_;
    std::vector<std::string> incomplete_;
    std::set<std::string> refused_calls_;
    NetworkUse network_;
    std::uint64_t lost_events_ = 0;
};

}  // namespace qk::record
