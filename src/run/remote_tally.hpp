// RemoteTally: what a run did with the remote cache, counted, and the block its summary says it in: what
// was restored and uploaded, and every result not shared and every fault, each with its reason and count
// (a cold sandboxed run that uploads nothing must say why).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "qk/audit/findings.hpp"
#include "qk/util/result.hpp"

namespace qk::run {

// Whether a stored result may be shared under `upload: verified`, and if not, why.
enum class ShareVerdict : std::uint8_t {
    verified,
    not_sandboxed,  // no sandbox saw it run: nobody looked
    opted_out,      // its target runs outside the sandbox ("qk:sandbox": false)
    not_audited,    // the sandbox did not see all it did (events lost, a recording incomplete, refused)
    went_beyond,    // the sandbox found it going beyond its declarations
};

// The verdict of a task's record (null: the sandbox did not see it run).
ShareVerdict share_verdict(const audit::TaskAudit* record);

// Why a stored result stayed in the local cache alone.
enum class KeptLocal : std::uint8_t {
    not_sandboxed,
    opted_out,
    not_audited,
    went_beyond,
    network,      // its task declares its network and uploadNetwork is false: its key alone does not reproduce it
    read_keyed,   // keyed by what it read (--record): another machine has not the read sets
    read_only,    // this run only reads (--remote-cache=read, nx.json's readOnly)
    token,        // the server refused the token for writing earlier in the run
    server_gone,  // the server stopped answering earlier in the run
    interrupted,  // the run was stopped before it was sent
};

struct RemoteTally {
    std::string server;  // "turbo http://host:3000", no credentials
    bool read = false, write = false;
    std::size_t restored = 0;   // entries fetched whole into the local cache
    std::size_t missed = 0;     // asked, not on the server
    std::size_t untrusted = 0;  // refused by `trust: verified`
    std::size_t not_asked = 0;  // not asked: the server had stopped answering or refused reading
    std::size_t uploaded = 0;   // sent, the replaced ones included
    std::size_t already = 0;    // on the server already (a HEAD said so): not sent again
    std::size_t replaced = 0;   // sent over an entry this run refused (corrupt, a bad signature)
    std::map<KeptLocal, std::size_t> kept;
    std::map<ErrorKind, std::size_t> fetch_faults, upload_faults;  // remote_* and cache_entry_* kinds
};

// The summary's block: "remote (turbo http://host): 3 restored; uploaded 2" and a line for each reason a
// result was not shared or an entry not restored, with its count. Ends in '\n'; empty without a server.
std::string remote_summary(const RemoteTally& tally);

// Whether an entry the server gave and this run refused for `kind` is damaged where it is stored (so this
// run's own result goes over it), rather than lost on the way or refused for what it is.
bool refused_as_damaged(ErrorKind kind);

}  // namespace qk::run
