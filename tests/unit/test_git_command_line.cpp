// The git qk runs: configuration on its command line that leaves git nothing to execute (issue 38), and
// the filter drivers git's configuration names emptied.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "qk/util/git.hpp"

using Strings = std::vector<std::string>;

namespace {

bool has_pair(const Strings& argv, const std::string& option, const std::string& value)
{
    for (std::size_t i = 0; i + 1 < argv.size(); ++i)
        if (argv[i] == option && argv[i + 1] == value)
            return true;
    return false;
}

}  // namespace

TEST_CASE("every git qk runs has fsmonitor, hooks, transports and the pager off", "[util][git]")
{
    const Strings argv = qk::git_command_line("/ws", {"rev-parse", "--verify", "-q", "HEAD"}, {});
    CHECK(Strings(argv.begin(), argv.begin() + 3) == Strings{"git", "-C", "/ws"});
    CHECK(has_pair(argv, "-c", "core.fsmonitor=false"));
    CHECK(has_pair(argv, "-c", "core.hooksPath=/dev/null"));
    CHECK(has_pair(argv, "-c", "protocol.allow=never"));
    CHECK(has_pair(argv, "-c", "log.showSignature=false"));
    CHECK(std::find(argv.begin(), argv.end(), "--no-pager") < std::find(argv.begin(), argv.end(), "rev-parse"));
    // Options go before the subcommand, its own arguments after it, unchanged.
    CHECK(Strings(argv.end() - 4, argv.end()) == Strings{"rev-parse", "--verify", "-q", "HEAD"});
    CHECK(std::find(argv.begin(), argv.end(), "--no-ext-diff") == argv.end());  // rev-parse takes no diff options
}

TEST_CASE("diff, log and show run no external diff nor textconv; diff asks no submodule's git", "[util][git]")
{
    const Strings diff = qk::git_command_line("/ws", {"diff", "--name-only", "main"}, {});
    CHECK(Strings(diff.end() - 6, diff.end()) ==
          Strings{"diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=dirty", "--name-only", "main"});
    const Strings log = qk::git_command_line("/ws", {"log", "-p"}, {});
    CHECK(Strings(log.end() - 4, log.end()) == Strings{"log", "--no-ext-diff", "--no-textconv", "-p"});
}

TEST_CASE("each filter driver git's configuration names is emptied, before the subcommand", "[util][git]")
{
    using namespace std::string_literals;
    // git config -z --name-only: names NUL-terminated; a driver's name may hold dots, and appears once
    // whatever its variables.
    const std::string listed = "filter.lfs.clean\0filter.lfs.smudge\0filter.lfs.required\0filter.a.b.process\0"s
                               "filter.novar\0"s;
    auto overrides = qk::git_filter_overrides(listed);
    REQUIRE(overrides);
    CHECK(*overrides == Strings{"-c", "filter.a.b.clean=", "-c", "filter.a.b.smudge=", "-c", "filter.a.b.process=",
                                "-c", "filter.a.b.required=false", "-c", "filter.lfs.clean=", "-c", "filter.lfs.smudge=",
                                "-c", "filter.lfs.process=", "-c", "filter.lfs.required=false"});
    const Strings argv = qk::git_command_line("/ws", {"diff"}, *overrides);
    CHECK(has_pair(argv, "-c", "filter.lfs.clean="));
    CHECK(std::find(argv.begin(), argv.end(), "filter.lfs.clean=") < std::find(argv.begin(), argv.end(), "diff"));

    auto none = qk::git_filter_overrides("");
    REQUIRE(none);
    CHECK(none->empty());
}

TEST_CASE("a filter driver whose name -c cannot spell is an error naming it", "[util][git]")
{
    using namespace std::string_literals;
    auto r = qk::git_filter_overrides("filter.a=b.clean\0"s);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("names a filter driver \"a=b\", whose name git's -c option cannot spell") !=
          std::string::npos);
    CHECK(r.error().message.find("remove [filter \"a=b\"]") != std::string::npos);
}
