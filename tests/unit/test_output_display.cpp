// OutputDisplay: prefixed lines, one write each; the lines that end tasks; the closing summary; the
// terminal mode's status area drawn and erased.
#include <unistd.h>

#include <mutex>
#include <thread>

#include <catch2/catch.hpp>

#include "run/line_splitter.hpp"
#include "run/output_display.hpp"

using namespace qk::run;
using Writes = std::vector<std::string>;
using std::chrono::milliseconds;

namespace {

struct Capture {
    std::mutex mutex;
    Writes writes;
    Sink sink()
    {
        return [this](std::string_view text) {
            std::lock_guard lock(mutex);
            writes.emplace_back(text);
        };
    }
    std::string all()
    {
        std::lock_guard lock(mutex);
        std::string out;
        for (auto& w : writes)
            out += w;
        return out;
    }
};

qk::record::ExitStatus code(int c) { return {c, 0}; }

}  // namespace

TEST_CASE("output display: each line prefixed, padded to the longest task id, one write each", "[run][display]")
{
    Capture out;
    {
        OutputDisplay display({"app:build", "lib:build", "web:typecheck"}, out.sink());
        display.started("app:build");
        display.line("app:build", "compiling");
        display.line("web:typecheck", "");
        display.finished("app:build", true, code(0), milliseconds(1234));
        display.finished("lib:build", false, code(2), milliseconds(300));
        display.finished("web:typecheck", false, {0, 9}, milliseconds(61'000));
    }
    CHECK(out.writes == Writes{
                            "app:build     | compiling\n",
                            "web:typecheck | \n",
                            "app:build     | ✔ done in 1.2s\n",
                            "lib:build     | ✖ failed: exit code 2 after 0.3s\n",
                            "web:typecheck | ✖ failed: killed by signal 9 (SIGKILL) after 1m 01s\n",
                        });
}

TEST_CASE("output display: restored output is replayed with the prefix; skipped tasks say why", "[run][display]")
{
    Capture out;
    OutputDisplay display({"a:build", "b:build"}, out.sink());
    display.restored("a:build", "one\r\ntwo");
    display.skipped("b:build", "a:test");
    CHECK(out.writes == Writes{
                            "a:build | one\n",
                            "a:build | two\n",
                            "a:build | ✔ restored from the cache\n",
                            "b:build | - skipped: a:test failed\n",
                        });
}

TEST_CASE("output display: the summary when everything succeeded", "[run][display]")
{
    Capture out;
    OutputDisplay display({"a:build", "b:build", "c:build"}, out.sink());
    display.finished("a:build", true, code(0), milliseconds(5));
    display.restored("b:build", "");
    display.finished("c:build", true, code(0), milliseconds(5));
    out.writes.clear();
    display.summary({{"build"}, 3, 0, false});
    CHECK(out.all() == "\n✔ Successfully ran target build for 3 projects (1 restored from the cache)\n");

    Capture two;
    OutputDisplay several({"a:build", "a:test"}, two.sink());
    several.finished("a:build", true, code(0), milliseconds(5));
    several.finished("a:test", true, code(0), milliseconds(5));
    several.summary({{"test", "build"}, 1, 1, false});
    CHECK(two.writes.back() == "\n✔ Successfully ran targets test, build for 1 project and 1 task they depend on\n");
}

TEST_CASE("output display: the summary names failed and skipped tasks", "[run][display]")
{
    Capture out;
    OutputDisplay display({"app:build", "lib:build", "lib:test", "web:build", "zed:build"}, out.sink());
    display.finished("lib:test", false, code(1), milliseconds(5));
    display.finished("lib:build", false, {0, 15}, milliseconds(5));
    display.skipped("app:build", "lib:build");
    display.restored("web:build", "");
    display.started("zed:build");
    out.writes.clear();
    display.summary({{"build", "test"}, 4, 0, false});
    CHECK(out.all() == "\n✖ Ran targets build, test for 4 projects: 1 succeeded (1 restored from the cache), "
                       "2 failed, 1 skipped, 1 not run\n"
                       "  ✖ lib:build  killed by signal 15 (SIGTERM)\n"
                       "  ✖ lib:test   exit code 1\n"
                       "  - app:build  skipped: lib:build failed\n");

    Capture interrupted;
    OutputDisplay cut({"a:build", "b:build"}, interrupted.sink());
    cut.finished("a:build", true, code(0), milliseconds(5));
    cut.summary({{"build"}, 2, 0, true});
    CHECK(interrupted.writes.back() ==
          "\n✖ Interrupted while running target build for 2 projects: 1 succeeded, 1 not run\n");
}

TEST_CASE("output display: concurrent tasks never interleave inside a line", "[run][display]")
{
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    std::string text;
    std::thread reader([&] {
        char buf[4096];
        for (ssize_t n; (n = ::read(fds[0], buf, sizeof(buf))) > 0;)
            text.append(buf, static_cast<std::size_t>(n));
    });
    {
        OutputDisplay display({"a:x", "bb:x"}, fd_sink(fds[1]));
        std::thread one([&] {
            for (int i = 0; i < 500; ++i)
                display.line("a:x", std::string(100, 'a'));
        });
        std::thread other([&] {
            for (int i = 0; i < 500; ++i)
                display.line("bb:x", std::string(100, 'b'));
        });
        one.join();
        other.join();
    }
    ::close(fds[1]);
    reader.join();
    ::close(fds[0]);
    std::size_t count = 0;
    bool all_whole = true;
    for_each_line(text, [&](std::string_view line) {
        ++count;
        all_whole &= line == "a:x  | " + std::string(100, 'a') || line == "bb:x | " + std::string(100, 'b');
    });
    CHECK(count == 1000);
    CHECK(all_whole);
}

TEST_CASE("output display: on a terminal a status area is drawn below the lines and erased at the end",
          "[run][display]")
{
    Capture out;
    OutputDisplay display({"app:build", "lib:build"}, out.sink(), {true, 40});
    display.started("app:build");
    std::string first = out.all();
    CHECK(first.find("app:build 0s") != std::string::npos);
    CHECK(first.find("0/2 done · 1 running") != std::string::npos);
    out.writes.clear();

    display.line("app:build", "hello");
    std::string second = out.all();
    // Erase the two status lines, print the line (coloured prefix), draw the status again.
    CHECK(second.rfind("\r\x1b[2A\x1b[J", 0) == 0);
    CHECK(second.find("\x1b[36mapp:build\x1b[0m \x1b[2m|\x1b[0m hello\x1b[0m\n") != std::string::npos);
    CHECK(second.find("1 running") != std::string::npos);

    display.finished("app:build", true, code(0), milliseconds(10));
    out.writes.clear();
    display.summary({{"build"}, 2, 0, false});
    std::string last = out.all();
    CHECK(last.rfind("\r\x1b[1A\x1b[J", 0) == 0);  // the status was down to its counts line
    CHECK(last.find("1 not run") != std::string::npos);
    CHECK(last.find("done ·") == std::string::npos);  // not drawn again after the summary
}

TEST_CASE("output display: a task id with terminal escapes is shown escaped, its command's output as written",
          "[run][display]")
{
    // A project named after its directory may hold ESC; what its command prints is its own (colours).
    Capture out;
    {
        OutputDisplay display({"evil\x1b[8m:build", "ok:build"}, out.sink());
        display.started("evil\x1b[8m:build");
        display.line("evil\x1b[8m:build", "\x1b[32mgreen\x1b[0m");
        display.note("evil\x1b[8m:build", "cannot read data/\x1b]0;t\x07: gone");
        display.finished("evil\x1b[8m:build", false, code(1), milliseconds(5));
        display.skipped("ok:build", "evil\x1b[8m:build");
        display.summary({{"build"}, 2, 0, false});
    }
    CHECK(out.all() == "evil\\x1b[8m:build | \x1b[32mgreen\x1b[0m\n"
                       "evil\\x1b[8m:build | qk: cannot read data/\\x1b]0;t\\x07: gone\n"
                       "evil\\x1b[8m:build | ✖ failed: exit code 1 after 0.0s\n"
                       "ok:build          | - skipped: evil\\x1b[8m:build failed\n"
                       "\n✖ Ran target build for 2 projects: 1 failed, 1 skipped\n"
                       "  ✖ evil\\x1b[8m:build  exit code 1\n"
                       "  - ok:build           skipped: evil\\x1b[8m:build failed\n");
}

TEST_CASE("output display: --output-style static holds a task's lines until it ends, dynamic shows failures only",
          "[run][display][output-style]")
{
    auto run = [](DisplayOptions options) {
        Capture out;
        {
            OutputDisplay display({"a:build", "b:build", "c:build"}, out.sink(), options);
            display.started("a:build");
            display.started("b:build");
            display.line("a:build", "a one");
            display.line("b:build", "b one");
            display.note("b:build", "a note");
            display.line("a:build", "a two");
            display.finished("b:build", false, code(1), milliseconds(100));
            display.finished("a:build", true, code(0), milliseconds(200));
            display.restored("c:build", "c cached");
        }
        return out.all();
    };
    DisplayOptions stream;
    CHECK(run(stream) == "a:build | a one\n"
                         "b:build | b one\n"
                         "b:build | qk: a note\n"
                         "a:build | a two\n"
                         "b:build | ✖ failed: exit code 1 after 0.1s\n"
                         "a:build | ✔ done in 0.2s\n"
                         "c:build | c cached\n"
                         "c:build | ✔ restored from the cache\n");
    DisplayOptions grouped{.style = OutputStyle::grouped};
    CHECK(run(grouped) == "b:build | qk: a note\n"  // qk's own notes are never held
                          "b:build | b one\n"
                          "b:build | ✖ failed: exit code 1 after 0.1s\n"
                          "a:build | a one\n"
                          "a:build | a two\n"
                          "a:build | ✔ done in 0.2s\n"
                          "c:build | c cached\n"
                          "c:build | ✔ restored from the cache\n");
    DisplayOptions dynamic{.style = OutputStyle::dynamic, .replay_restored = false};
    CHECK(run(dynamic) == "b:build | qk: a note\n"
                          "b:build | b one\n"
                          "b:build | ✖ failed: exit code 1 after 0.1s\n"
                          "a:build | ✔ done in 0.2s\n"
                          "c:build | ✔ restored from the cache\n");
    // The default of a run without --output-style: stream, but a restored task is one line.
    DisplayOptions quiet{.replay_restored = false};
    CHECK(run(quiet) == "a:build | a one\n"
                        "b:build | b one\n"
                        "b:build | qk: a note\n"
                        "a:build | a two\n"
                        "b:build | ✖ failed: exit code 1 after 0.1s\n"
                        "a:build | ✔ done in 0.2s\n"
                        "c:build | ✔ restored from the cache\n");
}

TEST_CASE("output style names are Nx's", "[run][display][output-style]")
{
    CHECK(parse_output_style("stream") == OutputStyle::stream);
    CHECK(parse_output_style("static") == OutputStyle::grouped);
    CHECK(parse_output_style("dynamic") == OutputStyle::dynamic);
    CHECK_FALSE(parse_output_style("tui"));
    CHECK_FALSE(parse_output_style("Stream"));
}

TEST_CASE("output display: results of tasks that declare their network are said once, counted", "[run][display]")
{
    Capture out;
    OutputDisplay display({"a:fetch", "b:fetch", "c:build"}, out.sink());
    for (const char* id : {"a:fetch", "b:fetch", "c:build"})
        display.finished(id, true, code(0), milliseconds(5));
    display.stored_with_network("a:fetch");
    display.stored_with_network("b:fetch");
    out.writes.clear();
    display.summary({{"fetch", "build"}, 3, 0, false});
    CHECK(out.all() == "\n✔ Successfully ran targets fetch, build for 3 projects\n"
                       "  2 results of tasks that declare their network (\"qk:sandbox\": {\"network\": true or a "
                       "list}): their keys alone do not reproduce them, as what they fetched is in no key (nx.json's "
                       "qk.remoteCache.uploadNetwork: false keeps such results from the remote cache)\n");

    Capture none;
    OutputDisplay plain({"c:build"}, none.sink());
    plain.finished("c:build", true, code(0), milliseconds(5));
    plain.summary({{"build"}, 1, 0, false});
    CHECK(none.writes.back().find("network") == std::string::npos);
}
