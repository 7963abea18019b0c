// check_remote: what `qk doctor` asks a remote cache before a run relies on it: that it is reachable, takes
// the token, lets this workspace write, and answers as its protocol says, each failure with what to do.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qk/remote/remote_server.hpp"

namespace qk::remote {

struct RemoteCheck {
    std::string name;     // "remote-reach", "remote-token", "remote-write", "remote-protocol"
    bool ok = false;
    bool tried = true;    // false: not asked (a workspace that only reads is not asked to write)
    std::string verdict;  // one line, no secret in it
    std::string fix;      // what to do, when it failed
};

// The checks, in order, stopping at the first that leaves the next nothing to ask. `write`: whether runs
// here upload (a workspace that only reads is not asked to); then a small probe entry, under a key no
// task's result has, is written and read back.
std::vector<RemoteCheck> check_remote(const RemoteServer& settings, bool write);

// The probe's key: 64 hex digits, where a task's key has 32, so it is never a task's.
inline constexpr std::string_view kProbeKey = "000000000000000000000000000000000000000000000000000000000d0c7000";

}  // namespace qk::remote
