// The classifier: a recording (as any engine would make it) judged by a task's rules.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "qk/audit/classify.hpp"
#include "qk/record/recording.hpp"
#include "rules_workspace.hpp"

using namespace qk;
using qk::test::RulesWorkspace;
using record::kCreate;
using record::kLinked;
using record::kList;
using record::kProbe;
using record::kRead;
using record::kRemove;
using record::kWrite;
using Paths = std::vector<std::string>;

namespace {

struct Fixture {
    RulesWorkspace ws;
    rules::Rules rules = make();
    record::Recording rec;

    rules::Rules make()
    {
        auto r = ws.rules_of("app:build", {"packages/app/.tool-cache"});
        REQUIRE(r);
        return std::move(r).value();
    }
    void add(const std::string& rel, std::uint16_t access) { rec.add(ws.abs(rel), access); }
    audit::TaskFindings findings() const { return audit::classify(rec, rules, ws.session->workspace()); }
};

}  // namespace

TEST_CASE("classify: each kind from one recording, sorted, paths relative", "[audit][classify]")
{
    Fixture f;
    f.add("packages/app/src/index.ts", kRead);
    f.add("other/notes.txt", kRead);
    f.add("docs/x.md", kRead);  // ignored read
    f.add("tsconfig.base.json", kRead);
    f.add(".env", kRead);
    f.add(".git/HEAD", kRead);
    f.add(".git/index", kWrite);
    f.add("packages/other/package.json", kRead);
    f.add(".nvmrc", kRead);
    f.add("packages/lib/src/lib.ts", kRead);
    f.add("packages/app/dist/main.js", kWrite | kCreate);
    f.add("stray.txt", kWrite | kCreate);
    f.add("nx.json", kRead);
    f.rec.add("/usr/lib/x86_64-linux-gnu/libc.so.6", kRead);
    f.rec.add("/tmp/scratch-file", kWrite | kCreate);
    audit::TaskFindings got = f.findings();
    CHECK(got.reads_outside_inputs == Paths{"nx.json", "other/notes.txt"});
    CHECK(got.tsconfig_reads == Paths{"tsconfig.base.json"});
    CHECK(got.stray_writes == Paths{"stray.txt"});
    CHECK(got.git_writes == Paths{".git/index"});
    CHECK(got.unkeyed_reads == Paths{".env", ".git/HEAD"});
    CHECK(got.manifest_reads == Paths{"packages/other/package.json"});
    CHECK(got.toolchain_reads == Paths{".nvmrc"});
    CHECK(got.dependency_reads == std::map<std::string, Paths>{{"lib", {"packages/lib/src/lib.ts"}}});
    CHECK(got.went_beyond());
}

TEST_CASE("classify: writes in .git, nested repositories' included, are the git writes enforce allows, but for what git runs",
          "[audit][classify]")
{
    Fixture f;
    for (const char* git : {".git", ".git/index", ".git/refs/heads/main", "sub/.git/x", "a/b/.git",
                            ".git/config", ".git/hooks/pre-commit", "sub/.git/commondir"})
        f.add(git, kWrite | kCreate);
    // Look alike, but are not Git's.
    for (const char* other : {".github/workflows/ci.yml", ".gitignore", "a.git/x", "x/.git2/y", "x/.git.bak", "git/x",
                              "out.git"})
        f.add(other, kWrite | kCreate);
    audit::TaskFindings got = f.findings();
    CHECK(got.git_writes == Paths{".git/index", ".git/refs/heads/main", "sub/.git/x"});
    // What git runs, or the git directory itself (made, removed or replaced): refused by enforce, so a
    // finding like any stray write (rules/held_paths.hpp).
    CHECK(got.stray_writes == Paths{".git", ".git/config", ".git/hooks/pre-commit", ".github/workflows/ci.yml",
                                    ".gitignore", "a.git/x", "a/b/.git", "git/x", "out.git", "sub/.git/commondir",
                                    "x/.git.bak", "x/.git2/y"});
}

TEST_CASE("classify: listing, probing and reading nothing undeclared is no finding", "[audit][classify]")
{
    Fixture f;
    f.add("other", kList);
    f.add("other/missing.txt", kProbe);
    f.add("packages/app/src/index.ts", kRead);
    f.add("packages/app/.tool-cache/x", kRead | kWrite | kCreate);
    CHECK(f.findings().empty());
}

TEST_CASE("classify: a file written then read is listed once, as written", "[audit][classify]")
{
    Fixture f;
    f.add("packages/app/version.txt", kWrite | kCreate | kRead);
    f.add("packages/app/dist/x.js", kWrite | kRead);  // an output read back: nothing
    audit::TaskFindings got = f.findings();
    CHECK(got.stray_writes == Paths{"packages/app/version.txt"});
    CHECK(got.reads_outside_inputs.empty());
}

TEST_CASE("classify: renames count at both ends; output directories may be made and removed", "[audit][classify]")
{
    Fixture f;
    f.rec.add_rename(f.ws.abs("packages/app/tmp-build"), f.ws.abs("packages/app/dist"));
    f.add("packages/app", kRemove);  // a directory an output lies in: rmdir, then mkdir
    f.add("packages", kCreate);
    CHECK(f.findings().stray_writes == Paths{"packages/app/tmp-build"});
}

TEST_CASE("classify: files written in a directory renamed into an output are judged where they are now",
          "[audit][classify]")
{
    // mkdir dist.tmp && echo > dist.tmp/a.js && mv dist.tmp dist: what the task left is dist/a.js, in its
    // output; dist.tmp was made and is gone (a temporary file), as enforce's upper layer shows it.
    Fixture f;
    std::filesystem::create_directories(f.ws.abs("packages/app/dist"));
    std::ofstream(f.ws.abs("packages/app/dist/a.js")) << "a\n";
    f.add("packages/app/dist.tmp", kCreate);
    f.add("packages/app/dist.tmp/a.js", kWrite | kCreate);
    f.add("packages/app/dist.tmp/gone.js", kWrite | kCreate);  // not in dist: removed before the rename
    f.rec.add_rename(f.ws.abs("packages/app/dist.tmp"), f.ws.abs("packages/app/dist"));
    audit::TaskFindings got = f.findings();
    CHECK(got.stray_writes == Paths{"packages/app/dist.tmp/gone.js"});
    CHECK(got.temporary_files == Paths{"packages/app/dist.tmp"});
    // Without the rename, the same files are written outside the outputs.
    Fixture g;
    g.add("packages/app/dist.tmp/a.js", kWrite | kCreate);
    CHECK(g.findings().stray_writes == Paths{"packages/app/dist.tmp/a.js"});
}

TEST_CASE("classify: a hard link's source is a read, judged as any read", "[audit][classify]")
{
    // ln other/notes.txt /tmp/h; cat /tmp/h: the read is of /tmp/h, outside the workspace; the link made
    // the workspace file's content reachable there.
    Fixture f;
    f.add("other/notes.txt", kLinked);
    f.add("packages/app/src/index.ts", kLinked);  // an input: linking it is as free as reading it
    f.add("packages/app/dist/main.js", kLinked);  // its own output
    f.add(".env", kLinked);
    f.rec.add("/tmp/h", kCreate);
    audit::TaskFindings got = f.findings();
    CHECK(got.reads_outside_inputs == Paths{"other/notes.txt"});
    CHECK(got.unkeyed_reads == Paths{".env"});
    CHECK(got.stray_writes.empty());
    // Made and linked by the task: judged as what it wrote.
    Fixture g;
    g.add("packages/app/tmp.js", kWrite | kCreate | kLinked);
    CHECK(g.findings().stray_writes == Paths{"packages/app/tmp.js"});
    CHECK(g.findings().reads_outside_inputs.empty());
}

TEST_CASE("classify: a read through a link counts where it lands", "[audit][classify]")
{
    Fixture f;
    // src/index.ts -> ../../../other/notes.txt, a file link the input glob matches: the key holds the
    // link's text, not what it leads to, so reading other/notes.txt through it is outside the inputs (as
    // enforce refuses it). A directory link an input names, or a json input's link, puts what it leads
    // to in the key and so in the rules (test_rules_json_links.cpp, test_linked_trees.cpp).
    f.rec.add(f.ws.abs("other/notes.txt"), kRead);
    f.rec.add_alias(f.ws.abs("packages/app/src/index.ts"), f.ws.abs("other/notes.txt"));
    CHECK(f.findings().reads_outside_inputs == Paths{"other/notes.txt"});
    // Spelled as another undeclared path, it stays a finding, under its canonical name.
    Fixture g;
    g.rec.add(g.ws.abs("other/notes.txt"), kRead);
    g.rec.add_alias(g.ws.abs("elsewhere/link.txt"), g.ws.abs("other/notes.txt"));
    CHECK(g.findings().reads_outside_inputs == Paths{"other/notes.txt"});
    // Through a node_modules link into a workspace project: the read counts where it lands, a dependency
    // project's file (linked-sibling rule); the link itself, open as node_modules is, allows nothing.
    Fixture h;
    h.add("packages/lib/src/lib.ts", kRead);
    h.rec.add_alias(h.ws.abs("packages/app/node_modules/lib/src/lib.ts"), h.ws.abs("packages/lib/src/lib.ts"));
    h.add("packages/app/banner.txt", kRead);  // its own project through a self-link: still outside its inputs
    h.rec.add_alias(h.ws.abs("node_modules/app/banner.txt"), h.ws.abs("packages/app/banner.txt"));
    audit::TaskFindings got = h.findings();
    CHECK(got.dependency_reads == std::map<std::string, Paths>{{"lib", {"packages/lib/src/lib.ts"}}});
    CHECK(got.reads_outside_inputs == Paths{"packages/app/banner.txt"});
}

TEST_CASE("classify: an incomplete recording is not audited and keeps no finding", "[audit][classify]")
{
    Fixture f;
    f.add("other/notes.txt", kRead);
    f.rec.mark_incomplete("12 events were lost: the ring buffer (4096 bytes) was full");
    audit::TaskAudit a = audit::audit_task("app:build", f.rec, f.rules, f.ws.session->workspace());
    CHECK(a.status == audit::TaskStatus::not_audited);
    CHECK(a.reason == "the recording is incomplete: 12 events were lost: the ring buffer (4096 bytes) was full");
    CHECK(a.findings.empty());

    Fixture g;
    g.add("other/notes.txt", kRead);
    audit::TaskAudit b = audit::audit_task("app:build", g.rec, g.rules, g.ws.session->workspace());
    CHECK(b.status == audit::TaskStatus::audited);
    CHECK(b.findings.reads_outside_inputs == Paths{"other/notes.txt"});
}

TEST_CASE("refused_accesses: qk's cache always, outside the workspace and refused calls only for a task that failed",
          "[audit][classify][enforce]")
{
    using record::kDenied;
    using record::kDeniedChange;
    for (bool landlock_only : {false, true}) {
        for (bool failed : {false, true}) {
            INFO("landlock_only " << landlock_only << ", failed " << failed);
            Fixture f;
            f.add(".qk/cache/forged", kDenied | kDeniedChange);  // EROFS over the overlay, EACCES alone
            f.rec.add("/proc/sys/kernel/core_pattern", kDenied | kDeniedChange);
            f.rec.add("/home/someone/.npmrc", kDenied);
            f.rec.add_refused_call("io_uring_setup");
            audit::TaskFindings got;
            audit::refused_accesses(f.rec, f.rules, {.landlock_only = landlock_only, .failed = failed}, got);
            CHECK(got.refused_writes == Paths{".qk/cache/forged"});
            CHECK(got.refused_outside ==
                  (failed ? Paths{"/home/someone/.npmrc", "/proc/sys/kernel/core_pattern"} : Paths{}));
            CHECK(got.refused_calls == (failed ? Paths{"io_uring_setup"} : Paths{}));
            CHECK(got.went_beyond());  // the forged cache entry, whether or not the task went on
        }
    }
}
