// Small helpers shared by unit tests: a temporary directory removed at the end, a shell command's
// standard output, and a case that cannot run here skipping (or failing, under QK_REQUIRE_PRIVILEGED).
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "qk/util/subprocess.hpp"

namespace qk::test {

// Catch2 v2 has no skip. A case that cannot run here calls skip() and returns: its results hold the warning
// "skipped: <why>" (scripts/test-summary counts the case as skipped), and once the run is over the test
// main prints "qk_unit_tests: skipped: <case>: <why>", which ctest reads as a skip (tests/CMakeLists.txt).
// A case that also failed is a failure. Defined in main.cpp.
void skip(const std::string& why);

// Whether CI asked that nothing privileged be skipped (QK_REQUIRE_PRIVILEGED set, and not to 0).
inline bool require_privileged()
{
    const char* v = std::getenv("QK_REQUIRE_PRIVILEGED");
    return v && *v && std::string_view(v) != "0";
}

// A privileged case (root, eBPF, strace, cgroups) that cannot run here: skipped, or under
// QK_REQUIRE_PRIVILEGED failed (FAIL ends the case). The caller returns.
inline void skip_or_fail(const std::string& why)
{
    if (require_privileged())
        FAIL(why);
    skip(why);
}

struct TempDir {
    std::filesystem::path path;  // canonical
    explicit TempDir(const std::string& prefix = "qk-test")
    {
        std::string t = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        REQUIRE(::mkdtemp(t.data()) != nullptr);
        path = std::filesystem::canonical(t);
    }
    ~TempDir()
    {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    // Writes `text` to `rel` under the directory, making its parents.
    void write(const std::string& rel, const std::string& text) const
    {
        std::filesystem::create_directories((path / rel).parent_path());
        std::ofstream(path / rel, std::ios::binary | std::ios::trunc) << text;
    }
};

// What `command` (run with /bin/sh) prints on stdout.
inline std::string shell_output(const std::string& command)
{
    qk::CaptureOptions options;
    options.stderr_to = qk::CaptureOptions::Stderr::inherited;
    auto ran = qk::run_captured({"/bin/sh", "-c", command}, options);
    REQUIRE(ran);
    return ran->out;
}

}  // namespace qk::test
