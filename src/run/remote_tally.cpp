// RemoteTally (remote_tally.hpp): the summary's remote block, one reason a line with its count.
#include "remote_tally.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "qk/util/printable.hpp"

namespace qk::run {

namespace {

// 1000 as "1,000": the counts of a large workspace are read at a glance.
std::string count(std::size_t n)
{
    std::string digits = std::to_string(n), out;
    for (std::size_t i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out += ',';
        out += digits[i];
    }
    return out;
}

// "1 result", "3 results".
std::string results(std::size_t n)
{
    return count(n) + (n == 1 ? " result" : " results");
}

std::string kept_why(KeptLocal why, bool one)
{
    switch (why) {
    case KeptLocal::not_sandboxed:
        return "not sandboxed, and the policy uploads verified results (run with --sandbox to verify them, or set "
               "nx.json's qk.remoteCache.upload to \"any\")";
    case KeptLocal::opted_out:
        return std::string(one ? "its target runs" : "their targets run") +
               " outside the sandbox (\"qk:sandbox\": false), and the policy uploads verified results";
    case KeptLocal::not_audited:
        return "not audited whole (events lost, a recording incomplete or a refusal: see the sandbox report)";
    case KeptLocal::went_beyond:
        return std::string("went beyond ") + (one ? "its" : "their") + " declarations (see the sandbox report)";
    case KeptLocal::network:
        return std::string(one ? "its task declares its" : "their tasks declare their") +
               " network, so a key alone does not reproduce " + (one ? "it" : "them") +
               ", and nx.json's qk.remoteCache.uploadNetwork is false";
    case KeptLocal::read_keyed:
        return std::string("keyed by what ") + (one ? "it" : "they") +
               " read (--record), which another machine cannot check";
    case KeptLocal::read_only:
        return "this run only reads (--remote-cache=read, or nx.json's qk.remoteCache.readOnly)";
    case KeptLocal::token:
        return "not sent: the server refused the token for writing (said above)";
    case KeptLocal::server_gone:
        return "not sent: the server had stopped answering (said above)";
    case KeptLocal::interrupted:
        return "not sent: the run was interrupted";
    }
    return "kept local";
}

std::string fault_words(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::remote_unreachable: return "the server was unreachable";
    case ErrorKind::remote_timeout: return "the server stalled";
    case ErrorKind::remote_forbidden: return "the server refused the token";
    case ErrorKind::remote_server: return "the server failed (a 5xx status)";
    case ErrorKind::remote_truncated: return "the transfer broke off";
    case ErrorKind::remote_tampered: return "refused as corrupt: its signature or SHA-256 did not match";
    case ErrorKind::remote_protocol: return "the server answered outside the protocol";
    case ErrorKind::remote_too_large:
        return "too large for the server (413): raise its limit (turborepo-remote-cache: BODY_LIMIT; nginx: "
               "client_max_body_size)";
    case ErrorKind::cache_entry_corrupt: return "refused as corrupt: a damaged archive";
    case ErrorKind::cache_entry_unsafe: return "refused: the archive writes where the task's entry may not";
    case ErrorKind::cache_entry_version: return "another qk's entry format";
    case ErrorKind::cache_entry_too_big: return "too large to keep (QK_CACHE_MAX_ENTRY_SIZE or the disk's free space)";
    default: return "a local error";
    }
}

std::string headline(const RemoteTally& t)
{
    std::vector<std::string> parts;
    if (t.read) {
        std::size_t faults = 0;
        for (const auto& [kind, n] : t.fetch_faults)
            faults += n;
        if (t.restored + t.missed + t.untrusted + t.not_asked + faults == 0)
            parts.push_back("nothing to fetch (every result was local, or not cacheable)");
        else
            parts.push_back(count(t.restored) + " restored" +
                            (t.missed ? fmt::format(", {} not on the server", count(t.missed)) : ""));
    }
    std::size_t kept = 0;
    for (const auto& [why, n] : t.kept)
        kept += n;
    std::size_t upload_faults = 0;
    for (const auto& [kind, n] : t.upload_faults)
        upload_faults += n;
    if (!t.write) {
        auto read_only = t.kept.find(KeptLocal::read_only);
        const std::string kept_here =
            read_only == t.kept.end() ? "" : fmt::format(", {} kept local", results(read_only->second));
        parts.push_back(fmt::format("uploads nothing: this run only reads (--remote-cache=read, or nx.json's "
                                    "qk.remoteCache.readOnly){}",
                                    kept_here));
    } else if (t.uploaded + t.already + kept + upload_faults == 0) {
        // Nothing was offered for upload (every result restored, or none cacheable): nothing to say of it.
    } else if (t.uploaded + t.already > 0 || kept == 0) {
        std::string up = t.uploaded ? "uploaded " + count(t.uploaded) : "uploaded nothing";
        if (t.already)
            up += fmt::format(", {} on the server already", count(t.already));
        parts.push_back(up);
    } else if (t.kept.size() == 1 && t.kept.begin()->first == KeptLocal::not_sandboxed) {
        // The whole run's reason, said as one: nothing is wrong with any task.
        parts.push_back(fmt::format("uploaded nothing: this run is not sandboxed and the policy uploads verified "
                                    "results ({} kept local; run with --sandbox to verify them, or set nx.json's "
                                    "qk.remoteCache.upload to \"any\")",
                                    results(kept)));
        return fmt::format("{}", fmt::join(parts, "; "));
    } else {
        parts.push_back("uploaded nothing");
    }
    return parts.empty() ? std::string("nothing asked, nothing to upload") : fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

ShareVerdict share_verdict(const audit::TaskAudit* record)
{
    if (!record)
        return ShareVerdict::not_sandboxed;
    if (record->status == audit::TaskStatus::unsandboxed)
        return ShareVerdict::opted_out;
    if ((record->status != audit::TaskStatus::audited && record->status != audit::TaskStatus::enforced) ||
        record->provenance.lost_events != 0)
        return ShareVerdict::not_audited;
    return audit::verified(*record) ? ShareVerdict::verified : ShareVerdict::went_beyond;
}

bool refused_as_damaged(ErrorKind kind)
{
    return kind == ErrorKind::remote_tampered || kind == ErrorKind::remote_truncated ||
           kind == ErrorKind::remote_protocol || kind == ErrorKind::cache_entry_corrupt ||
           kind == ErrorKind::cache_entry_unsafe;
}

std::string remote_summary(const RemoteTally& t)
{
    if (t.server.empty())
        return {};
    std::string out = fmt::format("  remote ({}): {}\n", printable(t.server), headline(t));
    auto line = [&out](const std::string& text) { out += "    " + text + "\n"; };
    const bool one_reason = t.kept.size() == 1 && t.kept.begin()->first == KeptLocal::not_sandboxed &&
                            t.uploaded + t.already == 0;
    for (const auto& [why, n] : t.kept)
        if (!one_reason && (why != KeptLocal::read_only || t.write))
            line(fmt::format("{} kept local: {}", results(n), kept_why(why, n == 1)));
    if (t.replaced)
        line(fmt::format("{} uploaded over {} the server held that this run refused as corrupt", count(t.replaced),
                         t.replaced == 1 ? "an entry" : "entries"));
    if (t.untrusted)
        line(fmt::format("{} not restored: trust is \"verified\", and {} record is not", count(t.untrusted),
                         t.untrusted == 1 ? "its" : "their"));
    for (const auto& [kind, n] : t.fetch_faults)
        line(fmt::format("{} not restored: {}", count(n), fault_words(kind)));
    if (t.not_asked)
        line(fmt::format("{} not asked for: the server had stopped answering, or refused reading (said above)",
                         count(t.not_asked)));
    for (const auto& [kind, n] : t.upload_faults)
        line(fmt::format("{} not uploaded: {}", results(n), fault_words(kind)));
    return out;
}

}  // namespace qk::run
