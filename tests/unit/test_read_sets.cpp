// Read sets (--record): saved under a declared key, newest first, each restored only while its reads
// hold what they held; and the task history that says which declared input moved a key.
#include <catch2/catch.hpp>

#include <fstream>

#include <set>

#include "qk/key/input_use.hpp"
#include "qk/key/read_sets.hpp"
#include "qk/key/task_history.hpp"
#include "qk/report/run_report.hpp"
#include "qk/workspace/workspace.hpp"
#include "test_support.hpp"

using qk::key::first_changed;
using qk::key::Hash128;
using qk::key::hash_bytes;
using qk::key::KeyPart;
using qk::key::ReadSet;
using qk::key::ReadSetStore;
using qk::test::TempDir;

namespace {

ReadSet set_of(std::vector<qk::key::RecordedRead> reads)
{
    ReadSet s;
    s.reads = std::move(reads);
    return s;
}

}  // namespace

TEST_CASE("a read set matches while each read holds what it held, and says which one moved", "[key][read-sets]")
{
    TempDir ws;
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    ws.write("tsconfig.json", "{}\n");
    ReadSet set = set_of({{".git/HEAD", hash_bytes("ref: refs/heads/main\n")},
                          {"tsconfig.base.json", std::nullopt},
                          {"tsconfig.json", hash_bytes("{}\n")}});
    CHECK_FALSE(first_changed(set, ws.path));

    ws.write(".git/HEAD", "ref: refs/heads/other\n");
    CHECK(first_changed(set, ws.path) == ".git/HEAD changed");
    ws.write(".git/HEAD", "ref: refs/heads/main\n");
    ws.write("tsconfig.base.json", "{}\n");  // a file it looked for and did not find
    CHECK(first_changed(set, ws.path) == "tsconfig.base.json appeared");
    std::filesystem::remove(ws.path / "tsconfig.base.json");
    std::filesystem::remove(ws.path / "tsconfig.json");
    CHECK(first_changed(set, ws.path) == "tsconfig.json was removed");
}

TEST_CASE("the result key of a set depends on the declared key and on every read", "[key][read-sets]")
{
    Hash128 declared = hash_bytes("key"), other = hash_bytes("other key");
    ReadSet a = set_of({{"a", hash_bytes("1")}});
    ReadSet b = set_of({{"a", hash_bytes("2")}});
    ReadSet absent = set_of({{"a", std::nullopt}});
    CHECK(a.result_key(declared) != b.result_key(declared));
    CHECK(a.result_key(declared) != absent.result_key(declared));
    CHECK(a.result_key(declared) != a.result_key(other));
    CHECK(a.result_key(declared) != declared);
    CHECK(a.result_key(declared) == set_of({{"a", hash_bytes("1")}}).result_key(declared));
}

TEST_CASE("sets under one key are kept, newest first, each once, and survive a reopen", "[key][read-sets]")
{
    TempDir cache;
    Hash128 key = hash_bytes("declared");
    ReadSetStore store = ReadSetStore::open(cache.path);
    CHECK(store.sets(key)->empty());
    CHECK_FALSE(std::filesystem::exists(cache.path / "read-sets"));  // made on the first add

    ReadSet one = set_of({{".git/HEAD", hash_bytes("main")}});
    one.result = one.result_key(key);
    ReadSet two = set_of({{".git/HEAD", hash_bytes("other")}, {"gone", std::nullopt}});
    two.result = two.result_key(key);
    REQUIRE(store.add(key, "app:build", one));
    REQUIRE(store.add(key, "app:build", two));
    auto sets = ReadSetStore::open(cache.path).sets(key);
    REQUIRE(sets);
    REQUIRE(sets->size() == 2);
    CHECK((*sets)[0].reads == two.reads);
    CHECK((*sets)[0].result == two.result);
    CHECK((*sets)[1].reads == one.reads);
    CHECK_FALSE((*sets)[0].created.empty());
    CHECK(ReadSetStore::open(cache.path).sets(hash_bytes("another key"))->empty());

    // The same reads again move to the front rather than being kept twice.
    REQUIRE(store.add(key, "app:build", one));
    sets = store.sets(key);
    REQUIRE(sets->size() == 2);
    CHECK((*sets)[0].reads == one.reads);

    // At most max_sets: the oldest go.
    for (std::size_t i = 0; i < ReadSetStore::max_sets + 3; ++i)
        REQUIRE(store.add(key, "app:build", set_of({{"n", hash_bytes(std::to_string(i))}})));
    sets = store.sets(key);
    REQUIRE(sets->size() == ReadSetStore::max_sets);
    CHECK((*sets)[0].reads[0].content == hash_bytes(std::to_string(ReadSetStore::max_sets + 2)));
}

TEST_CASE("a manifest that cannot be read is removed, and the error says which and why", "[key][read-sets]")
{
    TempDir cache;
    Hash128 key = hash_bytes("declared");
    auto file = cache.path / "read-sets" / (key.hex() + ".json");
    for (const char* text : {"{not json", R"({"schemaVersion": 2, "sets": []})",
                             R"({"schemaVersion": 1, "sets": [{"result": "xyz", "reads": []}]})",
                             R"({"schemaVersion": 1, "sets": [{"result": "00000000000000000000000000000000",
                                 "reads": [{"path": "a"}]}]})",
                             R"({"schemaVersion": 1, "sets": [{"result": "00000000000000000000000000000000",
                                 "reads": [{"path": "../outside", "hash": null}]}]})",
                             R"({"schemaVersion": 1, "sets": [{"result": "00000000000000000000000000000000",
                                 "reads": [{"path": "/etc/passwd", "hash": null}]}]})"}) {
        cache.write("read-sets/" + key.hex() + ".json", text);
        auto sets = ReadSetStore::open(cache.path).sets(key);
        REQUIRE_FALSE(sets);
        CHECK(sets.error().message.find(file.string()) != std::string::npos);
        CHECK(sets.error().message.find("were removed") != std::string::npos);
        CHECK_FALSE(std::filesystem::exists(file));
        CHECK(ReadSetStore::open(cache.path).sets(key)->empty());
    }
}

TEST_CASE("the task history says which part of the key moved", "[key][read-sets]")
{
    std::vector<KeyPart> before = {{"command", "", hash_bytes("c")},
                                   {"dependency", "lib:build", hash_bytes("d")},
                                   {"input", "app/a.ts", hash_bytes("1")},
                                   {"input", "app/b.ts", hash_bytes("2")}};
    CHECK_FALSE(qk::key::first_difference(before, before));
    auto now = before;
    now[2].hash = hash_bytes("changed");
    CHECK(qk::key::first_difference(before, now) == "input app/a.ts changed");
    now = before;
    now.push_back({"input", "app/c.ts", hash_bytes("3")});
    CHECK(qk::key::first_difference(before, now) == "input app/c.ts is new");
    now = before;
    now.erase(now.begin() + 3);
    CHECK(qk::key::first_difference(before, now) == "input app/b.ts is no longer among them");
    now = before;
    now[0].hash = hash_bytes("other command");
    CHECK(qk::key::first_difference(before, now) == "its command changed");
    now = before;
    now[1].hash = hash_bytes("dependency moved");
    CHECK(qk::key::first_difference(before, now) == "the task it depends on, lib:build, changed");
    // A file of a dependency reached through ^production moves only the input's digest.
    auto with_deps = before;
    with_deps.insert(with_deps.begin() + 2, {"dependencyInput", "production", hash_bytes("d1")});
    now = with_deps;
    now[2].hash = hash_bytes("d2");
    CHECK(qk::key::first_difference(with_deps, now) == "what ^production holds in the projects it depends on changed");

    TempDir cache;
    auto history = qk::key::TaskHistory::open(cache.path);
    CHECK_FALSE(history.last("@scope/app:build"));
    REQUIRE(history.remember("@scope/app:build", before));
    CHECK(history.last("@scope/app:build") == before);
    CHECK_FALSE(history.last("@scope/app:test"));
}

TEST_CASE("the run report gives each task its status, source, why it ran and its audit", "[key][read-sets]")
{
    qk::report::TaskRun built{"app:build", qk::report::RunStatus::succeeded, hash_bytes("k").hex(), qk::report::ResultSource::ran,
                              "a recorded read changed: .git/HEAD changed", 120};
    qk::report::TaskRun restored{"lib:build", qk::report::RunStatus::succeeded, hash_bytes("l").hex(),
                                 qk::report::ResultSource::restored_in_place, "", 80};
    qk::report::TaskRun skipped{"app:test", qk::report::RunStatus::skipped, "", qk::report::ResultSource::none, "", 0};
    qk::audit::RunAudit audit;
    qk::audit::TaskAudit a;
    a.task = "app:build";
    a.findings.unkeyed_reads = {".git/HEAD"};
    audit.tasks = {a, {"lib:build", qk::audit::TaskStatus::restored, {}, {}}};
    const qk::audit::RunIdentity run{"1234-1", "GITHUB_RUN_ID", "abc123", {"2"}};
    const qk::audit::Provenance machine{"2", "ci-7", "6.8.0", std::nullopt, 4, std::nullopt, 0};
    for (auto* t : {&built, &restored, &skipped})
        t->provenance = std::make_shared<const qk::audit::Provenance>(machine);
    auto recorded = machine;
    recorded.recorder = "ebpf";
    built.provenance = std::make_shared<const qk::audit::Provenance>(recorded);
    auto doc = qk::workspace::parse_json(qk::report::run_report_json({restored, built, skipped}, &audit, run),
                                         "report");
    REQUIRE(doc);
    // Members in the order written: the configuration reader's objects compare in order.
    auto seen = [](const char* recorder) {
        return std::string(R"({"shard": "2", "host": "ci-7", "kernel": "6.8.0", "recorder": )") + recorder +
               R"(, "landlockAbi": 4, "overlay": null, "lostEvents": 0})";
    };
    auto expected = qk::workspace::parse_json(R"({
      "schemaVersion": 1,
      "run": {"id": "1234-1", "idFrom": "GITHUB_RUN_ID", "commit": "abc123", "shards": ["2"]},
      "summary": {"tasks": 3, "succeeded": 2, "failed": 0, "restored": 1, "ran": 1},
      "tasks": {
        "lib:build": {"status": "succeeded", "hash": ")" + hash_bytes("l").hex() + R"(",
                      "source": "restoredInPlace", "durationMs": 80,
                      "provenance": )" + seen("null") + R"(},
        "app:build": {"status": "succeeded", "hash": ")" + hash_bytes("k").hex() + R"(", "source": "ran",
                      "ranBecause": "a recorded read changed: .git/HEAD changed", "durationMs": 120,
                      "provenance": )" + seen("\"ebpf\"") + R"(,
                      "audit": {"unkeyedReads": [".git/HEAD"]}},
        "app:test": {"status": "skipped", "durationMs": 0, "provenance": )" + seen("null") + R"(}
      }
    })", "expected");
    REQUIRE(expected);
    CHECK(*doc == *expected);
}

TEST_CASE("input use: counted per recorded run, a file gone from the key forgotten, never read after N runs",
          "[key][input-use]")
{
    TempDir cache;
    auto store = qk::key::InputUseStore::open(cache.path);
    const std::string task = "@scope/app:build";
    CHECK(store.load(task).empty());
    auto reads = [](std::set<std::string> read) {
        return [read = std::move(read)](std::string_view p) { return read.contains(std::string(p)); };
    };
    REQUIRE(store.add_run(task, {"a.ts", "b.ts", "c.ts"}, reads({"a.ts"})));
    auto second = store.add_run(task, {"a.ts", "b.ts", "c.ts"}, reads({"a.ts", "c.ts"}));
    REQUIRE(second);
    using U = qk::key::InputUse;
    CHECK(*second == std::vector<U>{{"a.ts", 2, 2}, {"b.ts", 2, 0}, {"c.ts", 2, 1}});
    CHECK(store.load(task) == *second);
    CHECK(qk::key::never_read(*second, 2) == std::vector<std::string>{"b.ts"});
    CHECK(qk::key::never_read(*second, 3).empty());
    // b.ts leaves the key and comes back: it starts from nothing; d.ts is new.
    REQUIRE(store.add_run(task, {"a.ts", "c.ts", "d.ts"}, reads({})));
    auto back = store.add_run(task, {"a.ts", "b.ts", "c.ts", "d.ts"}, reads({}));
    REQUIRE(back);
    CHECK(*back == std::vector<U>{{"a.ts", 4, 2}, {"b.ts", 1, 0}, {"c.ts", 4, 1}, {"d.ts", 2, 0}});
    CHECK(store.load("@scope/app:test").empty());
    // A damaged file is a count lost, never an error: the next run starts again.
    for (const char* damaged : {"qk input use 1\t@scope/app:build\n3\t4\ta.ts\n", "qk input use 1\t@scope/app:build\nx",
                                "qk input use 2\t@scope/app:build\n", "qk input use 1\t@scope/app:build\n1\t0\tb\n1\t0\ta\n"}) {
        auto file = cache.path / "input-use" / (qk::key::hash_bytes(task).hex() + ".txt");
        std::ofstream(file) << damaged;
        CHECK(store.load(task).empty());
    }
}
