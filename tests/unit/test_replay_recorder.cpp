#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "record/replay_recorder.hpp"
#include "recording_queries.hpp"

using qk::test::paths_with;

using namespace qk::record;

static std::string write_events(const std::string& text)
{
    std::string path = "/tmp/qk-replay-" + std::to_string(::getpid()) + ".jsonl";
    std::ofstream(path) << text;
    return path;
}

TEST_CASE("the replay engine turns recorded events into the same Recording", "[record][replay]")
{
    auto path = write_events(R"({"op":"fork","parent":1,"child":2}
{"op":"exec","pid":2,"ppid":1,"base":"/","name":"/w/tool","argv":["tool","-v"]}
{"op":"open","pid":2,"result":3,"flags":0,"resolved":"/w/in.txt","base":"/w","name":"in.txt"}

{"op":"open","pid":2,"result":-2,"flags":0,"base":"/w","name":"missing"}
{"op":"rename","pid":2,"result":0,"base":"/w","name":"a","base2":"/w","name2":"b"}
{"op":"exit","pid":2,"status":256}
{"op":"command","exitCode":1}
)");
    ReplayRecorder replay(path);
    auto trace = replay.record(Command{});
    REQUIRE(trace);
    CHECK(trace->recorder == "replay");
    CHECK(trace->status.code == 1);
    const auto& rec = trace->recording;
    CHECK(paths_with(rec, kRead) == std::vector<std::string>{"/w/in.txt", "/w/tool"});
    CHECK(paths_with(rec, kProbe) == std::vector<std::string>{"/w/missing"});
    CHECK(rec.renames().size() == 1);
    CHECK(rec.processes().at(2).exit_code == 1);
    CHECK(rec.processes().at(2).argv == std::vector<std::string>{"tool", "-v"});
    ::unlink(path.c_str());
}

TEST_CASE("replayed refusals are denials when the command asks for them, as under the real engines", "[record][replay]")
{
    auto path = write_events(R"({"op":"open","pid":2,"result":3,"resolved":"/w/in.txt","base":"/w","name":"in.txt"}
{"op":"open","pid":2,"result":-13,"flags":0,"base":"/w","name":"secret"}
{"op":"open","pid":2,"result":-1,"flags":0,"base":"/w","name":"mine"}
{"op":"execfail","pid":2,"result":-13,"base":"/w","name":"bin/tool"}
{"op":"open","pid":2,"result":-30,"flags":1,"base":"/w","name":".qk/cache/x"}
{"op":"open","pid":2,"result":-2,"flags":0,"base":"/w","name":"missing"}
{"op":"open","pid":2,"result":-21,"flags":1,"base":"/w","name":"dir"}
)");
    using Paths = std::vector<std::string>;
    for (bool probes : {true, false}) {
        for (bool denials : {true, false}) {
            INFO("probes " << probes << ", denials " << denials);
            Command cmd;
            cmd.record_probes = probes;
            cmd.record_denials = denials;
            auto trace = ReplayRecorder(path).record(cmd);
            REQUIRE(trace);
            const auto& rec = trace->recording;
            CHECK(paths_with(rec, kRead) == Paths{"/w/in.txt"});
            CHECK(paths_with(rec, kDenied) == (denials ? Paths{"/w/.qk/cache/x", "/w/bin/tool", "/w/mine", "/w/secret"} : Paths{}));
            CHECK(paths_with(rec, kDeniedChange) == (denials ? Paths{"/w/.qk/cache/x"} : Paths{}));  // EROFS
            CHECK(paths_with(rec, kProbe) == (probes ? Paths{"/w/missing"} : Paths{}));
            CHECK(rec.paths().size() == 1u + (denials ? 4u : 0u) + (probes ? 1u : 0u));  // never the EISDIR
        }
    }
    ::unlink(path.c_str());
}

TEST_CASE("a malformed recorded event names the file and line", "[record][replay]")
{
    auto path = write_events("{\"op\":\"fork\",\"parent\":1,\"child\":2}\n{\"op\":\"open\",\"pid\":\"x\"}\n");
    auto trace = ReplayRecorder(path).record(Command{});
    REQUIRE_FALSE(trace);
    CHECK_THAT(trace.error().message, Catch::Contains(path + ":2:"));

    path = write_events("not json\n");
    trace = ReplayRecorder(path).record(Command{});
    REQUIRE_FALSE(trace);
    CHECK_THAT(trace.error().message, Catch::Contains(":1:"));

    CHECK_FALSE(ReplayRecorder("/nonexistent/qk.jsonl").record(Command{}));
    ::unlink(path.c_str());
}
