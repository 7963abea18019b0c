// The run summary's remote block (run/remote_tally.hpp): every reason a result stays local and every fault
// said with its count, and the upload verdict of a task's record. tests/e2e/test_remote_run.py makes each
// of them happen against the real servers.
#include <catch2/catch.hpp>

#include "remote/http_transfer.hpp"
#include "run/remote_tally.hpp"

using namespace qk;
using namespace qk::run;

namespace {

RemoteTally tally()
{
    RemoteTally t;
    t.server = "turbo http://cache:3000";
    t.read = t.write = true;
    return t;
}

}  // namespace

TEST_CASE("remote summary: restores and uploads counted, large counts grouped", "[run][remote]")
{
    RemoteTally t = tally();
    t.restored = 1000;
    CHECK(remote_summary(t) == "  remote (turbo http://cache:3000): 1,000 restored\n");
    t.restored = 0;
    t.missed = 1000;
    t.uploaded = 997;
    t.kept[KeptLocal::went_beyond] = 3;
    CHECK(remote_summary(t) == "  remote (turbo http://cache:3000): 0 restored, 1,000 not on the server; uploaded 997\n"
                               "    3 results kept local: went beyond their declarations (see the sandbox report)\n");
}

TEST_CASE("remote summary: a run that is not sandboxed says so as the one reason", "[run][remote]")
{
    RemoteTally t = tally();
    t.missed = 2;
    t.kept[KeptLocal::not_sandboxed] = 2;
    CHECK(remote_summary(t) ==
          "  remote (turbo http://cache:3000): 0 restored, 2 not on the server; uploaded nothing: this run is not "
          "sandboxed and the policy uploads verified results (2 results kept local; run with --sandbox to verify "
          "them, or set nx.json's qk.remoteCache.upload to \"any\")\n");
    // Beside another reason it is one line among others.
    t.kept[KeptLocal::went_beyond] = 1;
    const std::string text = remote_summary(t);
    CHECK(text.find("uploaded nothing\n") != std::string::npos);
    CHECK(text.find("    2 results kept local: not sandboxed, and the policy uploads verified results") !=
          std::string::npos);
    CHECK(text.find("    1 result kept local: went beyond its declarations") != std::string::npos);
}

TEST_CASE("remote summary: each fault and each policy decision its own line with its count", "[run][remote]")
{
    RemoteTally t = tally();
    t.fetch_faults[ErrorKind::remote_timeout] = 2;
    t.fetch_faults[ErrorKind::remote_tampered] = 1;
    t.not_asked = 5;
    t.untrusted = 4;
    t.uploaded = 1;
    t.replaced = 1;
    t.upload_faults[ErrorKind::remote_forbidden] = 1;
    t.kept[KeptLocal::token] = 6;
    t.kept[KeptLocal::read_keyed] = 1;
    t.kept[KeptLocal::opted_out] = 2;
    CHECK(remote_summary(t) ==
          "  remote (turbo http://cache:3000): 0 restored; uploaded 1\n"
          "    2 results kept local: their targets run outside the sandbox (\"qk:sandbox\": false), and the policy "
          "uploads verified results\n"
          "    1 result kept local: keyed by what it read (--record), which another machine cannot check\n"
          "    6 results kept local: not sent: the server refused the token for writing (said above)\n"
          "    1 uploaded over an entry the server held that this run refused as corrupt\n"
          "    4 not restored: trust is \"verified\", and their record is not\n"
          "    2 not restored: the server stalled\n"
          "    1 not restored: refused as corrupt: its signature or SHA-256 did not match\n"
          "    5 not asked for: the server had stopped answering, or refused reading (said above)\n"
          "    1 result not uploaded: the server refused the token\n");
}

TEST_CASE("remote summary: a run that only reads says it once, with what it kept", "[run][remote]")
{
    RemoteTally t = tally();
    t.write = false;
    t.restored = 3;
    t.kept[KeptLocal::read_only] = 2;
    CHECK(remote_summary(t) == "  remote (turbo http://cache:3000): 3 restored; uploads nothing: this run only reads "
                               "(--remote-cache=read, or nx.json's qk.remoteCache.readOnly), 2 results kept local\n");
    CHECK(remote_summary(RemoteTally{}).empty());  // no server, no block
}

TEST_CASE("share_verdict: what the sandbox saw decides what may be shared as verified", "[run][remote]")
{
    CHECK(share_verdict(nullptr) == ShareVerdict::not_sandboxed);
    audit::TaskAudit task;
    task.status = audit::TaskStatus::audited;
    CHECK(share_verdict(&task) == ShareVerdict::verified);
    task.status = audit::TaskStatus::enforced;
    CHECK(share_verdict(&task) == ShareVerdict::verified);
    task.provenance.lost_events = 1;
    CHECK(share_verdict(&task) == ShareVerdict::not_audited);
    task.provenance.lost_events = 0;
    task.status = audit::TaskStatus::not_audited;
    CHECK(share_verdict(&task) == ShareVerdict::not_audited);
    task.status = audit::TaskStatus::unsandboxed;
    CHECK(share_verdict(&task) == ShareVerdict::opted_out);
    task.status = audit::TaskStatus::audited;
    task.findings.reads_outside_inputs.push_back("notes.txt");
    CHECK(share_verdict(&task) == ShareVerdict::went_beyond);
}

TEST_CASE("an entry refused for what is stored is replaced; one lost on the way or refused by policy is not",
          "[run][remote]")
{
    for (ErrorKind k : {ErrorKind::remote_tampered, ErrorKind::remote_truncated, ErrorKind::remote_protocol,
                        ErrorKind::cache_entry_corrupt, ErrorKind::cache_entry_unsafe})
        CHECK(refused_as_damaged(k));
    for (ErrorKind k : {ErrorKind::remote_unreachable, ErrorKind::remote_timeout, ErrorKind::remote_forbidden,
                        ErrorKind::remote_server, ErrorKind::remote_too_large, ErrorKind::cache_entry_version,
                        ErrorKind::cache_entry_too_big, ErrorKind::other})
        CHECK_FALSE(refused_as_damaged(k));
}

TEST_CASE("a request is said to wait at half its timeout, between 1 and 5 s", "[remote]")
{
    CHECK(remote::notice_after_s(30) == 5);
    CHECK(remote::notice_after_s(10) == 5);
    CHECK(remote::notice_after_s(4) == 2);
    CHECK(remote::notice_after_s(1) == 1);
    CHECK(remote::notice_after_s(0) == 1);
}

TEST_CASE("a 413 says the entry is too large and which limit to raise", "[remote]")
{
    const Error e = remote::status_error(413, "PUT http://cache/v8/artifacts/ab");
    CHECK(e.kind == ErrorKind::remote_too_large);
    CHECK(e.message.find("refuses an entry this large") != std::string::npos);
    CHECK(e.message.find("BODY_LIMIT") != std::string::npos);
}

TEST_CASE("remote summary: results kept for declaring their network say why and which setting", "[run][remote]")
{
    RemoteTally t = tally();
    t.missed = 5;
    t.uploaded = 2;
    t.kept[KeptLocal::network] = 3;
    CHECK(remote_summary(t) == "  remote (turbo http://cache:3000): 0 restored, 5 not on the server; uploaded 2\n"
                               "    3 results kept local: their tasks declare their network, so a key alone does not "
                               "reproduce them, and nx.json's qk.remoteCache.uploadNetwork is false\n");
    t.kept[KeptLocal::network] = 1;
    CHECK_THAT(remote_summary(t), Catch::Contains("1 result kept local: its task declares its network, so a key "
                                                  "alone does not reproduce it"));
}
