// The unit tests' main: Catch2's, and what ctest needs of it (tests/CMakeLists.txt registers each case as a
// ctest of its own, with tests/unit/discover.cmake):
// - `qk_unit_tests --qk-list-cases` prints each case a plain run would run, one a line: its name, its tags
//   (as written, "[a][b]") and its source file, separated by tabs;
// - after a run in which nothing failed, each case that skipped (qk::test::skip) prints
//   "qk_unit_tests: skipped: <case>: <why>" on stdout, which ctest reads as a skip.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "test_support.hpp"

namespace {

std::vector<std::pair<std::string, std::string>>& skipped_cases()
{
    static std::vector<std::pair<std::string, std::string>> cases;
    return cases;
}

int list_cases(Catch::Session& session)
{
    for (const Catch::TestCase& c : Catch::getAllTestCasesSorted(session.config())) {
        if (c.isHidden())
            continue;
        std::string tags;
        for (const std::string& tag : c.tags)
            tags += "[" + tag + "]";
        std::printf("%s\t%s\t%s\n", c.name.c_str(), tags.c_str(), c.lineInfo.file);
    }
    return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace

void qk::test::skip(const std::string& why)
{
    std::pair<std::string, std::string> skip{Catch::getResultCapture().getCurrentTestName(), why};
    if (!skipped_cases().empty() && skipped_cases().back() == skip)
        return;  // said once per case
    WARN("skipped: " << why);
    skipped_cases().push_back(std::move(skip));
}

int main(int argc, char** argv)
{
    Catch::Session session;
    if (argc == 2 && std::string_view(argv[1]) == "--qk-list-cases")
        return list_cases(session);
    int status = session.run(argc, argv);
    if (status == 0) {
        for (const auto& [name, why] : skipped_cases())
            std::printf("qk_unit_tests: skipped: %s: %s\n", name.c_str(), why.c_str());
        if (std::fflush(stdout) != 0)
            return 1;
    }
    return status;
}
