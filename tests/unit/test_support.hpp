// Small helpers shared by unit tests: a temporary directory removed at the end, and a shell command's
// standard output.
#pragma once

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <catch2/catch.hpp>

#include "qk/util/subprocess.hpp"

namespace qk::test {

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
