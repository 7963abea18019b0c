// A workspace for the local cache's and output collection's tests. It stands one level down, at dir/ws,
// so that dir/outside lies beside it: links leading out of the workspace need somewhere real to land.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "qk/key/cache.hpp"

namespace qk::test {

struct CacheWorkspace {
    std::filesystem::path dir, root;  // root = dir/ws

    explicit CacheWorkspace(const std::string& prefix)
    {
        static int n = 0;
        dir = std::filesystem::temp_directory_path() /
              (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++));
        std::filesystem::remove_all(dir);
        root = dir / "ws";
        std::filesystem::create_directories(root);
        std::filesystem::create_directories(dir / "outside");
    }
    ~CacheWorkspace()
    {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
    }
    CacheWorkspace(const CacheWorkspace&) = delete;
    CacheWorkspace& operator=(const CacheWorkspace&) = delete;

    // `rel` may also be absolute, to write outside. The mode is set whatever the umask, so that the
    // modes a restore gives back compare alike on every machine.
    void write(const std::filesystem::path& rel, const std::string& text = "x",
               std::filesystem::perms mode = std::filesystem::perms(0644)) const
    {
        std::filesystem::path p = rel.is_absolute() ? rel : root / rel;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p, std::ios::binary) << text;
        std::filesystem::permissions(p, mode);
    }
    key::LocalCache cache() const
    {
        auto c = key::LocalCache::open(root);
        if (!c)
            FAIL(c.error().message);
        return std::move(*c);
    }
};

inline std::string read(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace qk::test
