// Keys of tasks holding a symbolic link to a directory: the tree it leads to is keyed (KeyLinkedTree),
// nested links followed, cycles ended, inside or outside the workspace; keys without one do not move.
#include <catch2/catch.hpp>

#include "test_support.hpp"

#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "qk/key/file_index.hpp"
#include "qk/key/task_key.hpp"

using namespace qk::key;
using namespace qk::workspace;
namespace fs = std::filesystem;
using Strings = std::vector<std::string>;

namespace {

// app/linked -> ../shared/real, which holds a file, a subdirectory, an ignored directory, a nested link
// to a directory (shared/other), one to a file outside the workspace, a dangling one and one to its
// parent (a cycle). app/ext -> a directory outside the workspace.
struct LinkedWorkspace {
    qk::test::TempDir outside{"qk-linked-outside"};
    qk::test::TempDir dir{"qk-linked"};
    fs::path root = dir.path;

    LinkedWorkspace()
    {
        write("nx.json", "{}");
        write(".gitignore", "shared/real/build/\n");
        write("app/project.json", R"({ "name": "app", "targets": {
            "build": { "command": "true", "inputs": ["{projectRoot}/linked"] },
            "glob": { "command": "true", "inputs": ["{projectRoot}/**/*"] },
            "ext": { "command": "true", "inputs": ["{projectRoot}/ext"] },
            "plain": { "command": "true", "inputs": ["{projectRoot}/src/**/*"] } } })");
        write("app/src/main.ts", "main\n");
        write("shared/real/r.txt", "r\n");
        write("shared/real/sub/s.txt", "s\n");
        write("shared/real/build/generated.txt", "g\n");  // ignored: not in the index, hashed directly
        write("shared/real/node_modules/pkg/index.js", "skipped by name\n");
        write("shared/other/o.txt", "o\n");
        write("unrelated/u.txt", "u\n");
        outside.write("ext/e.txt", "e\n");
        outside.write("outside-file.txt", "f\n");
        fs::create_symlink("../other", root / "shared/real/nested");
        fs::create_symlink(outside.path / "outside-file.txt", root / "shared/real/file-link");
        fs::create_symlink("missing", root / "shared/real/dangling");
        fs::create_symlink("..", root / "shared/real/up");
        fs::create_symlink("../shared/real", root / "app/linked");
        fs::create_symlink(outside.path / "ext", root / "app/ext");
    }
    void write(const std::string& rel, const std::string& text) const { dir.write(rel, text); }
};

// Loads the workspace afresh (as a new qk run would) and computes the keys of the targets' tasks.
struct Keys {
    std::unique_ptr<Workspace> ws;
    std::unique_ptr<ProjectGraph> graph;
    std::unique_ptr<TaskGraph> tasks;
    std::unique_ptr<FileIndex> files;
    std::map<std::string, std::shared_ptr<const TaskKey>> by_id;

    explicit Keys(const fs::path& root, Strings targets = {"build", "glob", "ext", "plain"})
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
        auto t = TaskGraph::build(*graph, req);
        REQUIRE(t.ok());
        tasks = std::make_unique<TaskGraph>(std::move(*t));
        auto f = FileIndex::scan(*ws);
        REQUIRE(f.ok());
        files = std::make_unique<FileIndex>(std::move(*f));
        auto builder = KeyBuilder::create(*graph, *tasks, *files);
        REQUIRE(builder.ok());
        for (std::size_t i = 0; i < tasks->tasks().size(); ++i) {
            auto k = builder->key(i);
            INFO((k.ok() ? std::string() : k.error().message));
            REQUIRE(k.ok());
            by_id.emplace((*k)->task, *k);
        }
    }
    const TaskKey& operator[](const std::string& id) const
    {
        auto it = by_id.find(id);
        REQUIRE(it != by_id.end());
        return *it->second;
    }
};

Strings paths(const KeyLinkedTree& t)
{
    Strings out;
    for (const KeyFile& f : *t.files)
        out.push_back(f.path);
    return out;
}

Hash128 file_hash(const KeyLinkedTree& t, const std::string& path)
{
    for (const KeyFile& f : *t.files)
        if (f.path == path)
            return f.hash;
    FAIL("no " << path << " in the tree of " << t.link);
    return {};
}

}  // namespace

TEST_CASE("linked trees: a held link to a directory keys the tree it leads to", "[key][linked]")
{
    LinkedWorkspace w;
    Keys keys(w.root);
    const TaskKey& k = keys["app:build"];
    REQUIRE(k.linked_trees.size() == 1);
    const KeyLinkedTree& t = *k.linked_trees[0];
    CHECK(t.link == "app/linked");
    CHECK(t.target == (w.root / "shared/real").string());
    CHECK(t.targets ==
          Strings{(w.root / "shared").string(), (w.root / "shared/other").string(), (w.root / "shared/real").string()});
    CHECK(t.target_files == Strings{(w.outside.path / "outside-file.txt").string()});
    // Sorted by path relative to the link; node_modules skipped; the link to the parent enters shared
    // once (shared/other is entered already, through nested, so it is not walked again), and shared/real
    // in it is the directory the walk started from.
    CHECK(paths(t) == Strings{"build/generated.txt", "dangling", "file-link", "nested", "nested/o.txt", "r.txt",
                              "sub/s.txt", "up", "up/other", "up/real"});
    // A file the index holds keeps the index's hash.
    auto r = keys.files->find("shared/real/r.txt");
    REQUIRE(r);
    CHECK(file_hash(t, "r.txt") == keys.files->hash_of(*r));
    CHECK(file_hash(t, "build/generated.txt") == hash_bytes("g\n"));
    // The glob that selects the link holds the same tree; tasks without such a link hold none.
    REQUIRE(keys["app:glob"].linked_trees.size() == 2);
    CHECK(keys["app:glob"].linked_trees[1]->link == "app/linked");
    CHECK(keys["app:glob"].linked_trees[1]->hash == t.hash);
    CHECK(keys["app:plain"].linked_trees.empty());
    // Walked once per run: the tasks share what the walk found.
    CHECK(keys["app:glob"].linked_trees[1] == k.linked_trees[0]);
}

TEST_CASE("linked trees: an edit, a new file or an edit through a nested link moves the key; others do not",
          "[key][linked]")
{
    LinkedWorkspace w;
    Keys k0(w.root);
    auto moved = [&](const char* task, const Keys& before, const Keys& after) {
        return before[task].hash != after[task].hash;
    };

    w.write("unrelated/u.txt", "u2\n");  // outside every input and tree
    Keys k1(w.root);
    for (const char* task : {"app:build", "app:glob", "app:ext", "app:plain"}) {
        INFO(task);
        CHECK_FALSE(moved(task, k0, k1));
    }

    w.write("shared/real/r.txt", "r2\n");
    Keys k2(w.root);
    CHECK(moved("app:build", k1, k2));
    CHECK(moved("app:glob", k1, k2));
    CHECK_FALSE(moved("app:ext", k1, k2));
    CHECK_FALSE(moved("app:plain", k1, k2));

    w.write("shared/real/sub/added.txt", "new\n");
    Keys k3(w.root);
    CHECK(moved("app:build", k2, k3));
    CHECK_FALSE(moved("app:plain", k2, k3));

    w.write("shared/other/o.txt", "o2\n");  // through the nested link
    Keys k4(w.root);
    CHECK(moved("app:build", k3, k4));

    w.write("shared/real/build/generated.txt", "g2\n");  // ignored, so hashed outside the index
    Keys k5(w.root);
    CHECK(moved("app:build", k4, k5));

    w.outside.write("outside-file.txt", "f2\n");  // a nested link to a file outside the workspace
    Keys k6(w.root);
    CHECK(moved("app:build", k5, k6));

    fs::remove(w.root / "shared/real/dangling");  // a dangling link is keyed by its text
    fs::create_symlink("missing-too", w.root / "shared/real/dangling");
    Keys k7(w.root);
    CHECK(moved("app:build", k6, k7));

    fs::remove(w.root / "shared/real/sub/added.txt");  // removing a file
    Keys k8(w.root);
    CHECK(moved("app:build", k7, k8));

    w.write("shared/real/node_modules/pkg/index.js", "changed\n");  // skipped by name, as the index does
    Keys k9(w.root);
    CHECK_FALSE(moved("app:build", k8, k9));
    CHECK(k0["app:plain"].hash == k9["app:plain"].hash);
}

TEST_CASE("linked trees: a target outside the workspace is keyed too", "[key][linked]")
{
    LinkedWorkspace w;
    Keys k0(w.root);
    REQUIRE(k0["app:ext"].linked_trees.size() == 1);
    CHECK(k0["app:ext"].linked_trees[0]->target == (w.outside.path / "ext").string());
    CHECK(paths(*k0["app:ext"].linked_trees[0]) == Strings{"e.txt"});
    w.outside.write("ext/e.txt", "e2\n");
    Keys k1(w.root);
    CHECK(k0["app:ext"].hash != k1["app:ext"].hash);
    CHECK(k0["app:build"].hash == k1["app:build"].hash);
}

TEST_CASE("linked trees: cycles end, a link to the workspace's own ancestor directory included", "[key][linked]")
{
    qk::test::TempDir dir("qk-linked-cycle");
    dir.write("nx.json", "{}");
    dir.write("app/project.json", R"({ "name": "app", "targets": {
        "build": { "command": "true", "inputs": ["{projectRoot}/**/*"] } } })");
    dir.write("app/a/x.txt", "x\n");
    fs::create_symlink("..", dir.path / "app/a/parent");  // app: an ancestor of the link itself
    fs::create_symlink(".", dir.path / "app/a/self");
    fs::create_symlink("loop2", dir.path / "app/a/loop1");  // a loop of links leads nowhere
    fs::create_symlink("loop1", dir.path / "app/a/loop2");
    Keys keys(dir.path, {"build"});
    const TaskKey& k = keys["app:build"];
    Strings links;
    for (const auto& t : k.linked_trees)
        links.push_back(t->link);
    CHECK(links == Strings{"app/a/parent", "app/a/self"});
    // app/a/parent walks app, whose a holds the link back to app, entered already.
    CHECK(paths(*k.linked_trees[0]) == Strings{"a/loop1", "a/loop2", "a/parent", "a/self", "a/x.txt", "project.json"});
    CHECK(paths(*k.linked_trees[1]) ==
          Strings{"loop1", "loop2", "parent", "parent/a", "parent/project.json", "self", "x.txt"});
}

TEST_CASE("linked trees: an unreadable directory in the tree is an error naming it", "[key][linked]")
{
    LinkedWorkspace w;
    fs::permissions(w.root, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(w.outside.path, fs::perms::owner_all | fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(w.root / "shared/real/sub", fs::perms::none);
    // Root reads everything: the key is computed as nobody in a child process, which reports its error.
    int pipe_fds[2];
    REQUIRE(::pipe(pipe_fds) == 0);
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::close(pipe_fds[0]);
        if (::geteuid() == 0 && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(3);
        auto key_error = [&]() -> std::string {
            auto ws = Workspace::load(w.root);
            if (!ws)
                return "setup: " + ws.error().message;
            auto graph = ProjectGraph::build(*ws);
            if (!graph)
                return "setup: " + graph.error().message;
            TaskRequest req;
            req.targets = {"build"};
            auto tasks = TaskGraph::build(*graph, req);
            auto files = FileIndex::scan(*ws);
            if (!tasks || !files)
                return "setup failed";
            auto b = KeyBuilder::create(*graph, *tasks, *files);
            if (!b)
                return "setup: " + b.error().message;
            auto k = b->key(0);
            return k ? std::string("no error") : k.error().message;
        };
        std::string message = key_error();
        (void)!::write(pipe_fds[1], message.data(), message.size());
        ::_exit(0);
    }
    ::close(pipe_fds[1]);
    std::string message;
    char buf[4096];
    for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) > 0;)
        message.append(buf, static_cast<std::size_t>(n));
    ::close(pipe_fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    fs::permissions(w.root / "shared/real/sub", fs::perms::owner_all);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    CHECK(message == "task app:build: cannot read the directory " + (w.root / "shared/real/sub").string() +
                         " in the tree that the symbolic link app/linked leads to: Permission denied; the key holds "
                         "that tree, so make it readable, or leave the link out of the task's inputs");
}

TEST_CASE("the file index says which hashed files are symbolic links", "[key][files][linked]")
{
    LinkedWorkspace w;
    auto ws = Workspace::load(w.root);
    REQUIRE(ws.ok());
    auto index = FileIndex::scan(*ws);
    REQUIRE(index.ok());
    auto link = index->find("app/linked");
    auto file = index->find("app/src/main.ts");
    REQUIRE(link);
    REQUIRE(file);
    std::vector<std::uint32_t> both = {static_cast<std::uint32_t>(*link), static_cast<std::uint32_t>(*file)};
    REQUIRE(index->hash(both).ok());
    CHECK(index->is_symlink(*link));
    CHECK_FALSE(index->is_symlink(*file));
    auto other = index->find("unrelated/u.txt");
    REQUIRE(other);
    CHECK_THROWS_AS(index->is_symlink(*other), qk::FatalError);  // asked before hash() covered it
}

TEST_CASE("linked trees: two links to one directory share one walk; each is keyed under its own path", "[key][linked]")
{
    LinkedWorkspace w;
    fs::create_symlink(w.root / "shared/real", w.root / "app/again");  // absolute this time
    Keys keys(w.root, {"glob"});
    const TaskKey& k = keys["app:glob"];
    REQUIRE(k.linked_trees.size() == 3);
    CHECK(k.linked_trees[0]->link == "app/again");
    CHECK(k.linked_trees[2]->link == "app/linked");
    CHECK(k.linked_trees[0]->files == k.linked_trees[2]->files);  // the same walk
    CHECK(k.linked_trees[0]->hash == k.linked_trees[2]->hash);
}
