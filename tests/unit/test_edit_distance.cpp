// The edit distance behind "did you mean": typos, swaps, and how close a name must be to be suggested.
#include <catch2/catch.hpp>

#include "qk/util/edit_distance.hpp"

using qk::closest_names;
using qk::did_you_mean;
using qk::edit_distance;

TEST_CASE("edit_distance counts insertions, deletions, substitutions and adjacent swaps", "[util][edit-distance]")
{
    CHECK(edit_distance("", "") == 0);
    CHECK(edit_distance("build", "build") == 0);
    CHECK(edit_distance("", "abc") == 3);
    CHECK(edit_distance("abc", "") == 3);
    CHECK(edit_distance("biuld", "build") == 1);  // a swap is one edit, not two
    CHECK(edit_distance("buld", "build") == 1);
    CHECK(edit_distance("builds", "build") == 1);
    CHECK(edit_distance("bxild", "build") == 1);
    CHECK(edit_distance("kitten", "sitting") == 3);
    CHECK(edit_distance("ca", "abc") == 3);  // optimal string alignment: a swapped pair is not edited again
    CHECK(edit_distance("test", "lint") == edit_distance("lint", "test"));
}

TEST_CASE("closest_names suggests the nearest names within max(2, size/3), in name order", "[util][edit-distance]")
{
    std::vector<std::string> targets{"test", "build", "prebuild", "lint", "built"};
    CHECK(closest_names("biuld", targets) == std::vector<std::string>{"build"});
    CHECK(closest_names("buil", targets) == std::vector<std::string>{"build", "built"});  // ties, sorted
    CHECK(closest_names("tset", targets) == std::vector<std::string>{"test"});
    CHECK(closest_names("deploy", targets).empty());
    CHECK(closest_names("build", targets) == std::vector<std::string>{"built"});  // the name itself is not suggested
    // A short name is not "close" to one it shares nothing with.
    CHECK(closest_names("zz", {"a", "b", "ab"}).empty());
    CHECK(closest_names("a", {"b", "c"}).empty());
    // A long name allows more edits: a third of its size.
    CHECK(closest_names("@scope/my-libary-utils", {"@scope/my-library-util", "@scope/other"}) ==
          std::vector<std::string>{"@scope/my-library-util"});
    CHECK(closest_names("abcd", {"abce", "abcf", "abcg", "abch"}, 2) == std::vector<std::string>{"abce", "abcf"});
}

TEST_CASE("did_you_mean words the suggestion, or says nothing", "[util][edit-distance]")
{
    CHECK(did_you_mean("biuld", {"build", "test"}) == " (did you mean \"build\"?)");
    CHECK(did_you_mean("buil", {"build", "built", "test"}) == " (did you mean \"build\" or \"built\"?)");
    CHECK(did_you_mean("abcd", {"abce", "abcf", "abcg"}) == " (did you mean \"abce\", \"abcf\" or \"abcg\"?)");
    CHECK(did_you_mean("nope", {"a", "b", "c"}).empty());
}
