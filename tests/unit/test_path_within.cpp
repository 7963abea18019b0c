// The one containment test (qk/util/path_within.hpp) and the one special-name rule
// (qk/util/special_names.hpp): examples of each edge, then properties over many random paths made of
// the segments that make the edges, checked against path_within_reference.hpp. The seed is fixed, so a
// failure names an input that fails again.
#include <catch2/catch.hpp>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "path_within_reference.hpp"
#include "qk/util/path_parts.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/special_names.hpp"

using qk::is_plain_relative;
using qk::is_under;
using qk::is_within;
using qk::relative_under;
using qk::SpecialDir;

namespace {

using namespace std::string_literals;

// Paths of 0 to 5 segments from an alphabet that holds every edge: prefixes of one another ("a", "ab"),
// ".", "..", empty segments (a repeated or trailing '/'), the special names in two cases, a NUL; a
// fifth of them absolute.
class RandomPaths {
public:
    explicit RandomPaths(std::uint32_t seed) : rng_(seed) {}

    std::string next()
    {
        static const std::vector<std::string> segments = {
            "a", "b", "ab", ".", "..", "", ".git", ".GIT", "node_modules", "Node_Modules", ".qk", "a\0b"s};
        std::string out = pick(5) == 0 ? "/" : "";
        const std::size_t n = pick(6);
        for (std::size_t i = 0; i < n; ++i) {
            if (i > 0)
                out += '/';
            out += segments[pick(segments.size())];
        }
        return out;
    }

private:
    std::size_t pick(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
    std::mt19937 rng_;
};

// Prints a path with its NULs visible, for a failing CHECK's INFO.
std::string shown(const std::string& p)
{
    std::string out = "\"";
    for (char c : p)
        out += c == '\0' ? "\\0"s : std::string(1, c);
    return out + "\"";
}

}  // namespace

TEST_CASE("containment is by whole components, never by a shared prefix of a name", "[util][path-within]")
{
    CHECK(is_under("a/b/c", "a/b"));
    CHECK_FALSE(is_under("a/bc", "a/b"));  // the sibling that shares the text
    CHECK_FALSE(is_under("a/bc/d", "a/b"));
    CHECK_FALSE(is_under("a/b", "a/b"));  // strictly: not itself
    CHECK(is_within("a/b", "a/b"));
    CHECK_FALSE(is_within("a/bc", "a/b"));
    CHECK_FALSE(is_under("a", "a/b"));  // the parent is not under its child
    CHECK(is_under("/w/a", "/w"));
    CHECK_FALSE(is_under("/wx/a", "/w"));
    CHECK_FALSE(is_under("w/a", "/w"));  // a relative path is never under an absolute one, nor the reverse
    CHECK_FALSE(is_under("/w/a", "w"));
}

TEST_CASE("\"\" is the workspace root and \"/\" the file system's", "[util][path-within]")
{
    CHECK(is_under("a", ""));
    CHECK(is_under("a/b", ""));
    CHECK_FALSE(is_under("", ""));
    CHECK(is_within("", ""));
    CHECK_FALSE(is_under("/a", ""));  // the workspace root holds no absolute path
    CHECK(is_under("/a", "/"));
    CHECK_FALSE(is_under("/", "/"));
    CHECK_FALSE(is_under("a", "/"));
    CHECK(relative_under("a/b", "") == "a/b");
    CHECK(relative_under("/a/b", "/") == "a/b");
    CHECK(relative_under("a/b/c", "a") == "b/c");
    CHECK_FALSE(relative_under("a", "a"));
    CHECK_FALSE(relative_under("ab/c", "a"));
}

TEST_CASE("paths are text: trailing slashes, \".\" and \"..\" are not resolved", "[util][path-within]")
{
    // Callers pass canonical paths; what a non-canonical one gives is still the text's answer, and
    // is_plain_relative is what refuses such a path where it would matter.
    CHECK_FALSE(is_under("a/b", "a/"));  // a directory with a trailing '/' holds nothing: strip it first
    CHECK(is_under("a/", "a"));
    CHECK(is_under("a/../b", "a"));  // by text it is under a; resolved it is not
    CHECK_FALSE(is_plain_relative("a/../b"));
    CHECK(is_under("./a", "."));
    CHECK_FALSE(is_under("a", "."));
}

TEST_CASE("a plain relative path names something inside the workspace, however it is joined", "[util][path-within]")
{
    for (const char* ok : {"a", "a/b", "a/b/c", ".a", "..a", "a..", "a.b", "...", ".git/x", "a b"})
        CHECK(is_plain_relative(ok));
    for (const char* bad : {"", "/", "/a", "a/", "a//b", "//a", ".", "..", "./a", "a/.", "a/./b", "a/..", "../a",
                            "a/../b"})
        CHECK_FALSE(is_plain_relative(bad));
    CHECK_FALSE(is_plain_relative("a\0b"s));  // the kernel would read "a"
    CHECK_FALSE(is_plain_relative("a/\0/../.."s));
}

TEST_CASE(".git, .qk and node_modules are matched however their names are cased", "[util][path-within]")
{
    for (const char* git : {".git", ".GIT", ".Git", ".git/index", ".GIT/config", "pkg/.gIt/HEAD", "a/b/.git"})
        CHECK(qk::special_tree(git) == SpecialDir::git);
    for (const char* qk : {".qk", ".QK/cache", ".Qk/.git/x"})  // the root's .qk holds whatever it holds
        CHECK(qk::special_tree(qk) == SpecialDir::qk);
    for (const char* nm : {"node_modules/x", "NODE_MODULES/x", "a/Node_Modules/b", "a/.qk/node_modules"})
        CHECK(qk::special_tree(nm) == SpecialDir::node_modules);
    for (const char* none : {"", ".gitignore", "a.git", ".github/x", "git", "a/.qk", "node_modules2/x"})
        CHECK(qk::special_tree(none) == SpecialDir::none);
    CHECK(qk::special_tree("node_modules/p/.git/x") == SpecialDir::git);  // a package's .git is Git's
}

TEST_CASE("containment agrees with splitting on '/', over random paths", "[util][path-within]")
{
    RandomPaths paths(0x71c0417);
    for (int i = 0; i < 20000; ++i) {
        const std::string p = paths.next(), d = paths.next();
        INFO("path " << shown(p) << ", dir " << shown(d));
        const bool under = is_under(p, d);
        REQUIRE(under == qk_reference::is_under(p, d));
        REQUIRE(is_within(p, d) == (p == d || under));
        if (under)
            REQUIRE((p.starts_with(d) && p.size() > d.size()));
        // What relative_under gives joins back to the path, below the directory it was taken from.
        auto rest = relative_under(p, d);
        REQUIRE(rest.has_value() == under);
        if (rest) {
            const std::string joined = d.empty() ? std::string(*rest) : d == "/" ? "/" + std::string(*rest)
                                                                                 : d + "/" + std::string(*rest);
            REQUIRE(joined == p);
        }
        // Every path is under each of its own proper ancestors: its root, and the text before each '/'.
        if (!p.empty() && p != "/")
            REQUIRE(is_under(p, p.starts_with('/') ? "/" : ""));
        for (std::size_t slash = p.find('/', 1); slash != std::string::npos; slash = p.find('/', slash + 1))
            REQUIRE(is_under(p, std::string_view(p).substr(0, slash)));
    }
}

TEST_CASE("a plain relative path stays under the root it is joined to, over random paths", "[util][path-within]")
{
    RandomPaths paths(0x9a7e);
    const std::filesystem::path root = "/w/root";
    int plain = 0;
    for (int i = 0; i < 20000; ++i) {
        const std::string p = paths.next();
        INFO("path " << shown(p));
        const bool ok = is_plain_relative(p);
        REQUIRE(ok == qk_reference::is_plain_relative(p));
        if (!ok)
            continue;
        ++plain;
        const std::string joined = (root / p).lexically_normal().string();
        REQUIRE(is_under(joined, root.native()));
        REQUIRE(joined == root.native() + "/" + p);  // nothing for normalising to take away
        REQUIRE(is_under(p, ""));
    }
    CHECK(plain > 1000);  // the alphabet makes enough of them for the property to mean something
}

TEST_CASE("the special tree agrees with the spec's rule, over random paths", "[util][path-within]")
{
    RandomPaths paths(0x5bec);
    for (int i = 0; i < 20000; ++i) {
        std::string p = paths.next();
        p.erase(0, p.find_first_not_of('/'));  // workspace-relative
        INFO("path " << shown(p));
        REQUIRE(static_cast<int>(qk::special_tree(p)) == qk_reference::special_tree(p));
    }
}

TEST_CASE("parent_of and name_of split a path at its last '/', and join back to it", "[util][path-within]")
{
    static_assert(qk::parent_of("a/b/c") == "a/b" && qk::name_of("a/b/c") == "c");
    CHECK(qk::parent_of("top") == "");
    CHECK(qk::name_of("top") == "top");
    CHECK(qk::parent_of("") == "");
    CHECK(qk::parent_of("/a") == "");  // absolute at the top: "", not "/"
    CHECK(qk::name_of("/a") == "a");
    RandomPaths paths(0x9a7e);
    for (int i = 0; i < 20000; ++i) {
        const std::string p = paths.next();
        INFO("path " << shown(p));
        const std::string_view parent = qk::parent_of(p), name = qk::name_of(p);
        REQUIRE(name.find('/') == std::string_view::npos);
        REQUIRE((parent.empty() && p.find('/') == std::string::npos ? std::string(name)
                                                                      : std::string(parent) + "/" + std::string(name)) == p);
    }
}
