// A secret taken out of qk's environment, its bytes overwritten where they lay; qk made undumpable.
#include <catch2/catch.hpp>

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "qk/util/process_secrets.hpp"

TEST_CASE("a variable forgotten is gone from the environment and its value's bytes are zeros", "[util][secrets]")
{
    // putenv: the entry is this buffer, as the entries execve laid out are the kernel's environment block.
    static char entry[] = "QK_TEST_SECRET_ENTRY=hunter2";
    static char twice[] = "QK_TEST_SECRET_ENTRY=again";
    REQUIRE(::putenv(entry) == 0);
    REQUIRE(std::getenv("QK_TEST_SECRET_ENTRY") != nullptr);
    CHECK(qk::forget_environment_variable("QK_TEST_SECRET_ENTRY") == 1);
    CHECK(std::getenv("QK_TEST_SECRET_ENTRY") == nullptr);
    CHECK(std::all_of(entry, entry + sizeof(entry), [](char c) { return c == '\0'; }));
    // A name that is another's prefix is not it.
    static char longer[] = "QK_TEST_SECRET_ENTRY_2=kept";
    REQUIRE(::putenv(longer) == 0);
    REQUIRE(::putenv(twice) == 0);
    CHECK(qk::forget_environment_variable("QK_TEST_SECRET_ENTRY") == 1);
    CHECK(std::string(std::getenv("QK_TEST_SECRET_ENTRY_2")) == "kept");
    CHECK(std::all_of(twice, twice + sizeof(twice), [](char c) { return c == '\0'; }));
    ::unsetenv("QK_TEST_SECRET_ENTRY_2");
    CHECK(qk::forget_environment_variable("QK_TEST_SECRET_ABSENT") == 0);
}

TEST_CASE("make_undumpable clears the dumpable flag", "[util][secrets]")
{
    // In a child: the flag would otherwise stay cleared for the rest of this test process.
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        const bool before = ::prctl(PR_GET_DUMPABLE) == 1;
        const bool made = static_cast<bool>(qk::make_undumpable());
        ::_exit(before && made && ::prctl(PR_GET_DUMPABLE) == 0 ? 0 : 1);
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}
