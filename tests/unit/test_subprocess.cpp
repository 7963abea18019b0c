// run_captured: a helper program's output, stdout and stderr merged or apart, its status, and an error
// only when it cannot start.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <string>

#include "qk/util/subprocess.hpp"

using qk::CaptureOptions;

TEST_CASE("run_captured merges stderr, or keeps it apart, and reports the status", "[util][subprocess]")
{
    const std::string script = "echo out; echo err >&2; printf 'x%.0s' $(seq 1 70000) >&2; exit 3";
    auto merged = qk::run_captured({"/bin/sh", "-c", script});
    REQUIRE(merged);
    CHECK(merged->out.starts_with("out\nerr\n"));
    CHECK(merged->err.empty());
    CHECK(WEXITSTATUS(merged->wait_status) == 3);
    CHECK_FALSE(merged->succeeded());

    // Apart: more than a pipe's worth on stderr must not block the child while stdout is read.
    auto apart = qk::run_captured({"/bin/sh", "-c", script}, {.stderr_to = CaptureOptions::Stderr::apart});
    REQUIRE(apart);
    CHECK(apart->out == "out\n");
    CHECK(apart->err.size() == 4 + 70000);
    CHECK(apart->err.starts_with("err\nxxx"));

    auto ok = qk::run_captured({"sh", "-c", "cat; echo done"}, {.search_path = true});  // stdin is /dev/null
    REQUIRE(ok);
    CHECK(ok->out == "done\n");
    CHECK(ok->succeeded());
}

TEST_CASE("run_captured fails only when the program cannot start", "[util][subprocess]")
{
    auto missing = qk::run_captured({"/nonexistent/qk-no-such-program"});
    REQUIRE_FALSE(missing);
    CHECK(missing.error().message.find("cannot run /nonexistent/qk-no-such-program") != std::string::npos);
    CHECK_FALSE(qk::run_captured({}));
}
