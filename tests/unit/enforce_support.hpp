// Helpers for the enforce unit tests: building synthetic overlay upper layers (whiteouts, opaque
// directories, overlay xattrs) and workspaces, and describing a tree exactly, links never followed.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "qk/enforce/apply.hpp"

namespace qk::test {

namespace efs = std::filesystem;

inline void make_parents(const efs::path& p)
{
    efs::create_directories(p.parent_path());
}

inline void put_file(const efs::path& p, const std::string& text, mode_t mode = 0644)
{
    make_parents(p);
    std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
    REQUIRE(::chmod(p.c_str(), mode) == 0);
}

inline void put_dir(const efs::path& p, mode_t mode = 0755)
{
    efs::create_directories(p);
    REQUIRE(::chmod(p.c_str(), mode) == 0);
}

inline void put_link(const efs::path& p, const std::string& target)
{
    make_parents(p);
    REQUIRE(::symlink(target.c_str(), p.c_str()) == 0);
}

// The kernel's whiteout: a char device 0/0 (unprivileged since Linux 5.8).
inline void put_whiteout(const efs::path& p)
{
    make_parents(p);
    REQUIRE(::mknod(p.c_str(), S_IFCHR | 0000, makedev(0, 0)) == 0);
}

inline void put_xattr(const efs::path& p, const std::string& name, const std::string& value)
{
    REQUIRE(::lsetxattr(p.c_str(), name.c_str(), value.data(), value.size(), 0) == 0);
}

// The userspace tools' whiteout: a zero-size file with user.overlay.whiteout.
inline void put_xattr_whiteout(const efs::path& p)
{
    put_file(p, "");
    put_xattr(p, "user.overlay.whiteout", "y");
}

inline void put_opaque_dir(const efs::path& p, const std::string& value = "y")
{
    put_dir(p);
    put_xattr(p, "user.overlay.opaque", value);
}

inline std::vector<std::string> xattrs_of(const efs::path& p)
{
    char buf[4096];
    ssize_t n = ::llistxattr(p.c_str(), buf, sizeof buf);
    REQUIRE(n >= 0);
    std::vector<std::string> out;
    for (ssize_t at = 0; at < n;) {
        out.emplace_back(buf + at);
        at += static_cast<ssize_t>(out.back().size()) + 1;
    }
    return out;
}

// Every entry under `root`: "d" for a directory, "f:<content>" for a file, "l:<target>" for a link,
// "p" for a fifo, "c" for anything else. Links are described, not followed.
inline std::map<std::string, std::string> tree_of(const efs::path& root)
{
    std::map<std::string, std::string> out;
    std::vector<std::string> pending{""};
    while (!pending.empty()) {
        std::string rel = pending.back();
        pending.pop_back();
        efs::path dir = rel.empty() ? root : root / rel;
        DIR* d = ::opendir(dir.c_str());
        REQUIRE(d != nullptr);
        while (dirent* e = ::readdir(d)) {
            std::string name = e->d_name;
            if (name == "." || name == "..")
                continue;
            std::string child = rel.empty() ? name : rel + "/" + name;
            efs::path p = root / child;
            struct stat st;
            REQUIRE(::lstat(p.c_str(), &st) == 0);
            if (S_ISDIR(st.st_mode)) {
                out[child] = "d";
                pending.push_back(child);
            } else if (S_ISREG(st.st_mode)) {
                std::ifstream in(p, std::ios::binary);
                out[child] = "f:" + std::string(std::istreambuf_iterator<char>(in), {});
            } else if (S_ISLNK(st.st_mode)) {
                out[child] = "l:" + efs::read_symlink(p).string();
            } else {
                out[child] = S_ISFIFO(st.st_mode) ? "p" : "c";
            }
        }
        ::closedir(d);
    }
    return out;
}

// keep() for outputs named as path prefixes: a path at or under one is kept; a directory above one may
// be made or removed (what qk's rules answer for an output named whole).
inline enforce::KeepFn keep_prefixes(std::vector<std::string> prefixes)
{
    return [prefixes = std::move(prefixes)](std::string_view rel, bool directory) {
        for (const std::string& p : prefixes) {
            if (rel == p || (rel.size() > p.size() && rel.starts_with(p) && rel[p.size()] == '/'))
                return true;
            if (directory && p.size() > rel.size() && std::string_view(p).starts_with(rel) && p[rel.size()] == '/')
                return true;
        }
        return false;
    };
}

}  // namespace qk::test
