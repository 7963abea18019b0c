// Task keys on a copy of tests/fixtures/workspaces/keys (a -> b -> c, a pnpm lockfile): what each key
// holds, and which edits move it and which do not.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <fstream>
#include <random>

#include "qk/key/file_index.hpp"
#include "qk/key/task_key.hpp"
#include "test_support.hpp"

using namespace qk::key;
using namespace qk::workspace;
namespace fs = std::filesystem;

namespace {

using Strings = std::vector<std::string>;

// A private copy of the fixture, removed at the end.
struct TempCopy {
    fs::path root;
    TempCopy()
    {
        std::random_device rd;
        root = fs::temp_directory_path() / ("qk-key-test-" + std::to_string(rd()));
        fs::copy(fs::path(QK_SOURCE_DIR) / "tests/fixtures/workspaces/keys", root, fs::copy_options::recursive);
    }
    ~TempCopy() { fs::remove_all(root); }
    void write(const std::string& rel, const std::string& content) const
    {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel, std::ios::binary | std::ios::trunc) << content;
    }
    std::string read(const std::string& rel) const
    {
        std::ifstream in(root / rel, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    }
};

// Loads the workspace afresh (as a new qk run would) and computes every key of the request.
struct Keys {
    std::unique_ptr<Workspace> ws;
    std::unique_ptr<ProjectGraph> graph;
    std::unique_ptr<TaskGraph> tasks;
    std::unique_ptr<FileIndex> files;
    std::map<std::string, TaskKey> by_id;

    Keys(const fs::path& root, Strings targets, Strings projects = {})
    {
        auto w = Workspace::load(root);
        INFO((w.ok() ? std::string() : w.error().message));
        REQUIRE(w.ok());
        ws = std::make_unique<Workspace>(std::move(*w));
        auto built = ProjectGraph::build(*ws);
        REQUIRE(built.ok());
        graph = std::make_unique<ProjectGraph>(std::move(built).value());
        TaskRequest req;
        req.targets = std::move(targets);
        req.projects = std::move(projects);
        auto t = TaskGraph::build(*graph, req);
        INFO((t.ok() ? std::string() : t.error().message));
        REQUIRE(t.ok());
        tasks = std::make_unique<TaskGraph>(std::move(*t));
        auto f = FileIndex::scan(*ws);
        REQUIRE(f.ok());
        files = std::make_unique<FileIndex>(std::move(*f));
        auto builder = KeyBuilder::create(*graph, *tasks, *files);
        INFO((builder.ok() ? std::string() : builder.error().message));
        REQUIRE(builder.ok());
        // Expanded, so that what each key holds is listed whole; the hash is the key's.
        for (std::size_t i = 0; i < tasks->tasks().size(); ++i) {
            auto k = builder->key(i);
            INFO((k.ok() ? std::string() : k.error().message));
            REQUIRE(k.ok());
            auto e = builder->expanded(i);
            REQUIRE(e.ok());
            REQUIRE(e->hash == (*k)->hash);
            by_id.emplace((*k)->task, std::move(*e));
        }
    }

    const TaskKey& operator[](const std::string& id) const
    {
        auto it = by_id.find(id);
        REQUIRE(it != by_id.end());
        return it->second;
    }

    // Every file the key holds whole through its inputs, sorted.
    Strings input_files(const std::string& id) const
    {
        Strings out;
        for (const KeyGroup& g : (*this)[id].groups)
            for (std::uint32_t f : *g.files)
                out.push_back(files->files()[f]);
        std::sort(out.begin(), out.end());
        out.erase(std::unique(out.begin(), out.end()), out.end());
        return out;
    }
};

Hash128 hash_of(const fs::path& root, const std::string& id, Strings targets = {"build"})
{
    return Keys(root, std::move(targets))[id].hash;
}

}  // namespace

TEST_CASE("key: what a:build holds", "[key]")
{
    TempCopy ws;
    Keys keys(ws.root, {"build"}, {"a"});
    const TaskKey& k = keys["a:build"];
    // production of a (its own definition leaves e2e out), ^production of b and c (spec and jest out),
    // sharedGlobals' babel.config.json; dist is git-ignored.
    CHECK(keys.input_files("a:build") == Strings{
                                             "babel.config.json",
                                             "packages/a/README.md",
                                             "packages/a/package.json",
                                             "packages/a/project.json",
                                             "packages/a/src/index.spec.ts",
                                             "packages/a/src/index.ts",
                                             "packages/b/README.md",
                                             "packages/b/package.json",
                                             "packages/b/src/index.ts",
                                             "packages/c/README.md",
                                             "packages/c/package.json",
                                             "packages/c/src/index.ts",
                                         });
    Strings always;
    for (const KeyFile& f : k.always)
        always.push_back(f.path);
    CHECK(always == Strings{".gitignore", "packages/a/package.json"});
    Strings effect;
    for (const KeyEffectFile& f : k.effect_files)
        effect.push_back(f.path);
    CHECK(effect == Strings{"nx.json", "packages/a/project.json", "pnpm-workspace.yaml", "package.json", "pnpm-lock.yaml"});
    CHECK(k.packages.source == KeyPackages::Source::importers);
    CHECK(k.packages.importers == Strings{"packages/a", "."});
    REQUIRE(k.packages.closure);
    CHECK(k.packages.closure->size() == 2);  // lodash and eslint; b is a link, a project-graph edge
    CHECK(k.dependency_tasks.size() == 1);
    CHECK(k.dependency_tasks[0].first == "b:build");
    CHECK(k.dependency_tasks[0].second == keys["b:build"].hash);
    CHECK(k.env.size() == 1);
    CHECK(k.outputs.paths == Strings{"packages/a/dist", "dist/a", "dist/custom-a"});
}

TEST_CASE("key: an input edit moves it, reverting the edit restores it", "[key]")
{
    TempCopy ws;
    Hash128 before = hash_of(ws.root, "a:build");
    CHECK(hash_of(ws.root, "a:build") == before);  // a no-op: the same key
    std::string original = ws.read("packages/a/src/index.ts");
    ws.write("packages/a/src/index.ts", "export const a = 2;\n");
    Hash128 edited = hash_of(ws.root, "a:build");
    CHECK(edited != before);
    ws.write("packages/a/src/index.ts", original);
    CHECK(hash_of(ws.root, "a:build") == before);
    // A git-ignored file (dist) and a file outside every input do not count.
    ws.write("packages/a/dist/out.js", "built");
    ws.write("other/notes.txt", "notes");
    CHECK(hash_of(ws.root, "a:build") == before);
}

TEST_CASE("key: ^production across a chain of three projects", "[key]")
{
    TempCopy ws;
    Keys k0(ws.root, {"build"});
    // c's source moves c, b (through ^production and c:build's hash) and a.
    ws.write("packages/c/src/index.ts", "export const c = 2;\n");
    Keys k1(ws.root, {"build"});
    CHECK(k1["c:build"].hash != k0["c:build"].hash);
    CHECK(k1["b:build"].hash != k0["b:build"].hash);
    CHECK(k1["a:build"].hash != k0["a:build"].hash);
    // A spec file in c is left out of production everywhere: nothing moves.
    ws.write("packages/c/src/extra.spec.ts", "test()\n");
    Keys k2(ws.root, {"build"});
    CHECK(k2["c:build"].hash == k1["c:build"].hash);
    CHECK(k2["a:build"].hash == k1["a:build"].hash);
    // a's own e2e folder is out of a's production; a new file there moves nothing either.
    ws.write("packages/a/e2e/more.ts", "e2e\n");
    CHECK(Keys(ws.root, {"build"})["a:build"].hash == k1["a:build"].hash);
}

TEST_CASE("key: a json input keys only the fields it selects", "[key]")
{
    TempCopy ws;
    Keys k0(ws.root, {"tsconfig"}, {"a"});
    REQUIRE(k0["a:tsconfig"].json_files.size() == 1);
    CHECK(k0["a:tsconfig"].json_files[0].path == "tsconfig.base.json");
    Hash128 before = k0["a:tsconfig"].hash;
    // An unselected field, an excluded one, comments, reformatting and member order: no move.
    ws.write("tsconfig.base.json", R"({"exclude": ["dist"], "compilerOptions": {"target": "es2022",
        "paths": {"b": ["x"]}, "strict": true}})");
    CHECK(hash_of(ws.root, "a:tsconfig", {"tsconfig"}) == before);
    // A selected one: moves.
    ws.write("tsconfig.base.json", R"({"compilerOptions": {"strict": false, "target": "es2022"}})");
    CHECK(hash_of(ws.root, "a:tsconfig", {"tsconfig"}) != before);
    // A file that is not JSON is keyed whole.
    ws.write("tsconfig.base.json", "not json");
    Hash128 raw = hash_of(ws.root, "a:tsconfig", {"tsconfig"});
    ws.write("tsconfig.base.json", "not json either");
    CHECK(hash_of(ws.root, "a:tsconfig", {"tsconfig"}) != raw);
}

TEST_CASE("key: externalDependencies narrows the installed packages to those named", "[key]")
{
    TempCopy ws;
    Keys keys(ws.root, {"lint"}, {"a"});
    const KeyPackages& p = keys["a:lint"].packages;
    CHECK(p.source == KeyPackages::Source::named);
    CHECK(p.names == Strings{"eslint"});
    REQUIRE(p.closure);
    CHECK(p.closure->keys(*std::make_unique<PnpmLock>(*parse_pnpm_lock((ws.root / "pnpm-lock.yaml").string()))) ==
          Strings{"eslint@9.0.0"});
    CHECK(keys["a:lint"].runtime.size() == 1);
    // b's build counts what b and the root install: is-odd, its dependency is-number, and eslint.
    Keys b(ws.root, {"build"}, {"b"});
    CHECK(b["b:build"].packages.closure->size() == 3);
}

TEST_CASE("key: env and runtime inputs; a failing runtime command is an error", "[key]")
{
    TempCopy ws;
    ::setenv("QK_TEST_SHARED", "one", 1);
    Hash128 one = hash_of(ws.root, "c:build");
    ::setenv("QK_TEST_SHARED", "two", 1);
    CHECK(hash_of(ws.root, "c:build") != one);
    ::unsetenv("QK_TEST_SHARED");
    Hash128 unset = hash_of(ws.root, "c:build");
    ::setenv("QK_TEST_SHARED", "", 1);
    CHECK(hash_of(ws.root, "c:build") != unset);  // set but empty is not unset
    ::unsetenv("QK_TEST_SHARED");

    ws.write("packages/a/project.json", R"({"name": "a", "targets": {"lint": {"command": "true",
        "inputs": [{"runtime": "exit 3"}]}}})");
    auto w = Workspace::load(ws.root);
    REQUIRE(w.ok());
    auto g = ProjectGraph::build(*w);
    TaskRequest req;
    req.targets = {"lint"};
    req.projects = {"a"};
    auto t = TaskGraph::build(*g, req);
    REQUIRE(t.ok());
    auto f = FileIndex::scan(*w);
    REQUIRE(f.ok());
    auto b = KeyBuilder::create(*g, *t, *f);
    REQUIRE(b.ok());
    auto k = b->key(0);
    REQUIRE_FALSE(k.ok());
    CHECK(k.error().message == "task a:lint: runtime input \"exit 3\" failed (exit status 3); the key needs its output");
}

TEST_CASE("key: dependentTasksOutputFiles hashes what dependency tasks wrote in their outputs", "[key]")
{
    TempCopy ws;
    Hash128 before = hash_of(ws.root, "a:typecheck", {"typecheck"});
    ws.write("packages/a/dist/index.d.ts", "export declare const a: number;\n");  // a:build's output
    ws.write("packages/a/dist/index.js", "exports.a = 1;\n");                     // not a .d.ts
    Keys keys(ws.root, {"typecheck"});
    const TaskKey& k = keys["a:typecheck"];
    REQUIRE(k.dependency_outputs.size() == 1);
    CHECK(k.dependency_outputs[0].path == "packages/a/dist/index.d.ts");
    CHECK(k.hash != before);
}

TEST_CASE("key: a bad lockfile is an error naming it", "[key]")
{
    TempCopy ws;
    ws.write("pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters: [\n");
    auto w = Workspace::load(ws.root);
    REQUIRE(w.ok());
    auto g = ProjectGraph::build(*w);
    TaskRequest req;
    req.targets = {"build"};
    auto t = TaskGraph::build(*g, req);
    auto f = FileIndex::scan(*w);
    REQUIRE(f.ok());
    auto b = KeyBuilder::create(*g, *t, *f);
    REQUIRE_FALSE(b.ok());
    CHECK(b.error().message.find("pnpm-lock.yaml:") != std::string::npos);
}

TEST_CASE("key: tasks without linked directories keep the hashes recorded before linked trees were keyed", "[key]")
{
    // Recorded with `qk show task P:T --json` at b217fc5, before a key held the trees that symbolic links to
    // directories lead to: a key with no such link must not move (the cache entries stay valid). Links to
    // a file and dangling links are no linked trees either. Recorded again when `^` inputs became one
    // digest per input composed from each dependency's own, and the project graph as it reaches a task
    // (which the effect files hold) a digest composed the same way (issue 16): every key of a task whose
    // project has dependencies moved once then.
    ::unsetenv("QK_TEST_SHARED");
    TempCopy ws;
    const std::map<std::string, std::string> recorded = {
        {"a:build", "5995245bd794666fe9785314a89edf20"},     {"a:test", "b6ca37d3c4b270fd5d8c9fda5453b2d6"},
        {"a:lint", "1e3af1ea02a48cddbf925f30217003f8"},      {"a:docs", "519255dbd4eb4be584908cbca3e218ba"},
        {"a:typecheck", "d0d950f02f49a2af26c23e64a190ba31"}, {"a:tsconfig", "d6e4da0a999043d8a5cc04fd225511f5"},
        {"b:build", "0a948ec7fef6841a1afbec103bbe89a8"},     {"c:build", "adbf0d63a76e93215433f490e962c63e"},
    };
    Keys keys(ws.root, {"build", "test", "lint", "docs", "typecheck", "tsconfig"});
    CHECK(keys.by_id.size() == recorded.size());
    for (const auto& [id, hex] : recorded) {
        INFO(id);
        CHECK(keys[id].hash.hex() == hex);
    }
    fs::create_symlink("index.ts", ws.root / "packages/a/src/link.ts");
    fs::create_symlink("nowhere", ws.root / "packages/a/src/gone");
    Keys linked(ws.root, {"build", "test"}, {"a"});
    CHECK(linked["a:build"].hash.hex() == "c0d7fb3c5a03e45666f1100985cecc38");
    CHECK(linked["a:test"].hash.hex() == "e946cd55f03cf450b3ba279050879165");
}

namespace {

// A chain a -> b -> c -> d (each depends on the next), a cycle c <-> e, and an unrelated u; every
// build keys ^production.
void write_graph_workspace(const fs::path& root, bool with_cycle)
{
    auto write = [&](const std::string& rel, const std::string& text) {
        fs::create_directories((root / rel).parent_path());
        std::ofstream(root / rel) << text;
    };
    write("nx.json", R"({"namedInputs": {"default": ["{projectRoot}/**/*"], "production": ["default"]},
                         "targetDefaults": {"build": {"inputs": ["production", "^production"], "cache": true}}})");
    write("pnpm-workspace.yaml", "packages: ['libs/*']\n");
    write("package.json", R"({"name": "root", "private": true})");
    std::map<std::string, Strings> deps = {{"a", {"b"}}, {"b", {"c"}}, {"c", {"d"}}, {"d", {}}, {"u", {}}};
    if (with_cycle) {
        deps["c"].push_back("e");
        deps["e"] = {"c"};
    }
    for (const auto& [name, on] : deps) {
        std::string dependencies;
        for (const std::string& d : on)
            dependencies += (dependencies.empty() ? "" : ", ") + fmt::format(R"("{}": "workspace:*")", d);
        write("libs/" + name + "/package.json", fmt::format(R"({{"name": "{}", "dependencies": {{{}}}}})", name, dependencies));
        write("libs/" + name + "/project.json",
              fmt::format(R"({{"name": "{}", "targets": {{"build": {{"command": "true"}}}}}})", name));
        write("libs/" + name + "/src/index.ts", "export const " + name + " = 1;\n");
    }
}

}  // namespace

TEST_CASE("key: ^ inputs are one digest composed from each dependency's own", "[key]")
{
    qk::test::TempDir ws;
    write_graph_workspace(ws.path, false);
    Keys before(ws.path, {"build"});
    REQUIRE(before["a:build"].dependency_inputs.size() == 1);
    CHECK(before["a:build"].dependency_inputs[0].first == "production");
    CHECK(before["d:build"].dependency_inputs[0].second != before["a:build"].dependency_inputs[0].second);
    // Expanded, a's key lists the files of b, c and d, not its own twice nor u's.
    Strings files = before.input_files("a:build");
    for (const char* f : {"libs/a/src/index.ts", "libs/b/src/index.ts", "libs/c/src/index.ts", "libs/d/src/index.ts"})
        CHECK(std::find(files.begin(), files.end(), f) != files.end());
    CHECK(std::find(files.begin(), files.end(), "libs/u/src/index.ts") == files.end());

    // A file of the deepest dependency moves every key above it, and no other.
    std::ofstream(ws.path / "libs/d/src/index.ts") << "export const d = 2;\n";
    Keys edited(ws.path, {"build"});
    for (const char* moved : {"a:build", "b:build", "c:build", "d:build"})
        CHECK(edited[moved].hash != before[moved].hash);
    CHECK(edited["u:build"].hash == before["u:build"].hash);

    // A project nothing depends on, added, moves no other key.
    fs::create_directories(ws.path / "libs/new/src");
    std::ofstream(ws.path / "libs/new/package.json") << R"({"name": "new"})";
    std::ofstream(ws.path / "libs/new/project.json") << R"({"name": "new", "targets": {"build": {"command": "true"}}})";
    Keys added(ws.path, {"build"});
    for (const char* same : {"a:build", "b:build", "c:build", "d:build", "u:build"})
        CHECK(added[same].hash == edited[same].hash);
}

TEST_CASE("key: a dependency cycle holds every project of the cycle but the task's own", "[key]")
{
    qk::test::TempDir ws;
    write_graph_workspace(ws.path, true);
    Keys before(ws.path, {"build"});
    Strings c_files = before.input_files("c:build");
    CHECK(std::find(c_files.begin(), c_files.end(), "libs/e/src/index.ts") != c_files.end());
    Strings e_files = before.input_files("e:build");
    CHECK(std::find(e_files.begin(), e_files.end(), "libs/c/src/index.ts") != e_files.end());
    CHECK(std::find(e_files.begin(), e_files.end(), "libs/d/src/index.ts") != e_files.end());
    // e's own file moves c (which reaches it) and a; c's digest does not hold c itself, so the digests of
    // c and e differ though they reach the same projects.
    CHECK(before["c:build"].dependency_inputs[0].second != before["e:build"].dependency_inputs[0].second);
    std::ofstream(ws.path / "libs/e/src/index.ts") << "export const e = 2;\n";
    Keys edited(ws.path, {"build"});
    CHECK(edited["c:build"].dependency_inputs[0].second != before["c:build"].dependency_inputs[0].second);
    CHECK(edited["a:build"].hash != before["a:build"].hash);
    CHECK(edited["e:build"].dependency_inputs[0].second == before["e:build"].dependency_inputs[0].second);
    CHECK(edited["d:build"].hash == before["d:build"].hash);
}

TEST_CASE("key: a task's own warm paths are never in its key, even where its inputs select them", "[key]")
{
    TempCopy ws;
    std::string project = ws.read("packages/a/project.json");
    const std::string lint = R"("lint": {)";
    REQUIRE(project.find(lint) != std::string::npos);
    project.replace(project.find(lint), lint.size(), R"("lint": { "qk:warm": ["{projectRoot}/.lintcache"],)");
    ws.write("packages/a/project.json", project);
    // Not git-ignored, so `default` ({projectRoot}/**/*) selects it.
    ws.write("packages/a/.lintcache/cache.json", R"({"src/index.ts": "ok"})");
    Keys before(ws.root, {"lint", "test"}, {"a"});
    auto holds = [&](const Keys& k, const std::string& id) {
        Strings files = k.input_files(id);
        return std::find(files.begin(), files.end(), "packages/a/.lintcache/cache.json") != files.end();
    };
    CHECK_FALSE(holds(before, "a:lint"));
    CHECK(holds(before, "a:test"));  // another task's key is its own business

    // The tool rewriting its cache, or the cache putting it back, moves neither the key nor a run's verdict.
    ws.write("packages/a/.lintcache/cache.json", R"({"src/index.ts": "ok", "src/other.ts": "ok"})");
    Keys rewritten(ws.root, {"lint", "test"}, {"a"});
    CHECK(rewritten["a:lint"].hash == before["a:lint"].hash);
    CHECK(rewritten["a:test"].hash != before["a:test"].hash);
    fs::remove_all(ws.root / "packages/a/.lintcache");
    CHECK(Keys(ws.root, {"lint"}, {"a"})["a:lint"].hash == before["a:lint"].hash);
    // Its other inputs still count.
    ws.write("packages/a/src/index.ts", "export const a = 3;\n");
    CHECK(Keys(ws.root, {"lint"}, {"a"})["a:lint"].hash != before["a:lint"].hash);
}
