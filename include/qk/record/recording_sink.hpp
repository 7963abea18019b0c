// RecordingSink: turns recorder-neutral events into a Recording. The one place that decides what an
// event means (an O_RDWR open is a read and a write, ENOENT is a probe, EACCES a denial, ...) and how
// its paths become absolute and canonical.
#pragma once

#include <string>
#include <unordered_set>

#include "qk/record/events.hpp"
#include "qk/record/path_resolver.hpp"
#include "qk/record/recording.hpp"

namespace qk::record {

struct Command;

class RecordingSink {
public:
    explicit RecordingSink(Recording& out, PathResolver resolver = PathResolver{})
        : out_(out), resolver_(std::move(resolver)) {}
    // What `cmd` asks the recording to keep (record_probes, record_denials, record_only_denials): every
    // engine makes its sink so, with what it records of the command.
    RecordingSink(Recording& out, const Command& cmd);

    void on_fs(const FsOp& op);
    void on_fork(const ProcFork& fork);
    void on_exec(const ProcExec& exec);
    void on_exit(const ProcExit& exit);
    // A connect, or a datagram sent or received: the endpoint it reached, and a DNS query's name and its
    // answer's addresses when the datagram holds a DNS message (recording_network.cpp).
    void on_net(const NetOp& op);
    void mark_incomplete(std::string reason) { out_.mark_incomplete(std::move(reason)); }

    Recording& recording() { return out_; }
    // Failed lookups (kProbe) left out, as Command::record_probes = false asks.
    void skip_probes() { probes_ = false; }
    // Opens and execs refused with EACCES or EPERM recorded (kDenied), as Command::record_denials asks.
    void keep_denials() { denials_ = true; }
    // No success, only those refusals and (unless skipped) the probes (Command::record_only_denials);
    // processes are still recorded.
    void keep_only_denials() { denials_ = true, only_denials_ = true; }

private:
    // Absolute canonical path of an argument; false (and the recording marked incomplete) if too long.
    bool resolve(const PathArg& arg, bool follow_last, std::string& out);
    void on_open(const FsOp& op);
    // A failed open or exec: a probe (ENOENT), a denial (EACCES, EPERM), or nothing.
    void on_failed_lookup(const FsOp& op);
    // A change (unlink, rmdir, mkdir, rename, link, symlink, mknod, truncate) refused with EACCES or
    // EPERM: a denial of the path it would have changed, when denials are kept.
    void on_refused_change(const FsOp& op);
    // The canonical path of a successful link's source into `out`; false when it names no file the
    // workspace could hold (a descriptor's file without a name) or is too long.
    bool linked_source(const FsOp& op, std::string& out);
    // Remembers `spelled` as an alias of `path` when it names it another way (through a link).
    void note_spelling(const PathArg& spelled, const std::string& path);

    Recording& out_;
    PathResolver resolver_;
    // Spellings already given to add_alias ("base\0name\0target"), so a repeated open costs a lookup.
    StringSet spellings_;
    std::string spelling_;
    bool probes_ = true;
    bool denials_ = false;
    bool only_denials_ = false;
};

}  // namespace qk::record
