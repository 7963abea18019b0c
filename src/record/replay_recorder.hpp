// The replay engine: a recording made of events written down in a file (JSON Lines), so that what
// consumes recordings can be tested without privileges or a kernel. One event per line:
//   {"op":"open","pid":1,"result":3,"flags":0,"resolved":"/w/a","base":"/w","name":"a","created":true,"directory":false}
//   {"op":"rename"|"link","pid":1,"result":0,"flags":0,"base":"/w","name":"a","base2":"/w","name2":"b"}
//   {"op":"unlink"|"rmdir"|"mkdir"|"symlink"|"truncate"|"chdir"|"execfail","pid":1,"result":0,"base":"/w","name":"x"}
//   {"op":"fork","parent":1,"child":2}   {"op":"exec","pid":2,"ppid":1,"base":"/w","name":"/bin/cc","argv":["cc"]}
//   {"op":"exit","pid":2,"status":0}     {"op":"incomplete","reason":"..."}   {"op":"command","exitCode":0}
//   {"op":"connect"|"send"|"recv","pid":1,"fd":3,"result":0,"udp":false,"address":"10.0.0.1","port":443,
//    "payload":"<the datagram's bytes in hex>"}   (bpf/events.h, enum qk_net_op)
// A failed "open" or "execfail" carries its -errno in "result", as the real engines do: -2 (ENOENT) is
// a probe, -13 (EACCES), -1 (EPERM) or -30 (EROFS) a denial, kept as Command::record_probes and record_denials say.
#pragma once

#include <string>

#include "qk/record/recorder.hpp"

namespace qk::record {

class ReplayRecorder : public Recorder {
public:
    explicit ReplayRecorder(std::string events_path) : path_(std::move(events_path)) {}
    std::string_view name() const override { return "replay"; }
    // Replays the file; of `cmd` only record_probes, record_denials, on_start (given a stop that does
    // nothing) and on_finish are used. An Error names the file, line and what is wrong.
    Result<Trace> record(const Command& cmd) override;

private:
    std::string path_;
};

}  // namespace qk::record
