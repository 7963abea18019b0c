#include "qk/record/path_resolver.hpp"

#include <limits.h>
#include <stdlib.h>

#include <cstdlib>

#include <vector>

namespace qk::record {

std::string PathResolver::join_lexically(std::string_view base, std::string_view name)
{
    std::vector<std::string_view> parts;
    auto split = [&parts](std::string_view s) {
        while (!s.empty()) {
            auto slash = s.find('/');
            auto part = s.substr(0, slash);
            if (part == "..") {
                if (!parts.empty())
                    parts.pop_back();
            } else if (!part.empty() && part != ".") {
                parts.push_back(part);
            }
            if (slash == std::string_view::npos)
                break;
            s.remove_prefix(slash + 1);
        }
    };
    if (name.empty() || name.front() != '/')
        split(base);
    split(name);
    std::string out;
    for (auto p : parts) {
        out += '/';
        out += p;
    }
    return out.empty() ? "/" : out;
}

std::string PathResolver::canonical_dir(const std::string& dir)
{
    auto it = dir_cache_->find(dir);
    if (it != dir_cache_->end())
        return it->second;
    // Gone or never there: resolve what still exists above it and keep the rest as spelled. A loop, not
    // a recursion per component: a traced command controls the path, and fuzz_strace overflowed the stack
    // with one of a few thousand slashes.
    std::string head = dir, rest, result;
    for (;;) {
        if (auto hit = dir_cache_->find(head); hit != dir_cache_->end()) {
            result = hit->second;
            break;
        }
        if (char* real = ::realpath(head.c_str(), nullptr)) {
            result = real;
            std::free(real);
            break;
        }
        auto slash = head.rfind('/');
        if (head == "/" || slash == std::string::npos) {
            result = "/";
            if (slash == std::string::npos)
                rest = rest.empty() ? head : head + "/" + rest;
            break;
        }
        rest = rest.empty() ? head.substr(slash + 1) : head.substr(slash + 1) + "/" + rest;
        head.resize(slash == 0 ? 1 : slash);
    }
    if (!rest.empty())
        result = join_lexically(result, rest);
    dir_cache_->emplace(dir, result);
    return result;
}

namespace {

// /proc's per-process links (/proc/self/fd/3, /proc/1234/cwd) and /dev/fd, /dev/stdin... that lead to
// them name the traced process's descriptors: resolved here they would be qk's own. The kernel side
// decodes the caller's /proc/self and /proc/thread-self; anything else stays as spelled, outside the
// workspace, where a refusal through it is still named (audit::refused_accesses).
bool per_process_link(std::string_view raw)
{
    return raw.starts_with("/proc/") || raw == "/dev/fd" || raw.starts_with("/dev/fd/") ||
           raw.starts_with("/dev/std");
}

}  // namespace

std::string PathResolver::canonical(std::string_view base, std::string_view name, bool follow_last)
{
    // Resolve on the raw spelling, not the lexical one: "link/.." is where the link points, then up.
    raw_.clear();
    if (name.empty() || name.front() != '/')
        raw_.append(base).append("/");
    raw_.append(name);
    if (!follow_last)
        if (auto hit = spelled_cache_->find(std::string_view(raw_)); hit != spelled_cache_->end())
            return hit->second;
    std::string raw = raw_;
    while (raw.size() > 1 && raw.back() == '/')
        raw.pop_back();
    // Checked on the lexical form: a task under a root of its own spells "//dev/fd/3" (its root "/",
    // then the name), and a hostile one "/dev/./fd/3".
    if (raw.find("proc") != std::string::npos || raw.find("dev") != std::string::npos)  // the rest: no cost
        if (std::string lexical = join_lexically("", raw); per_process_link(lexical))
            return lexical;
    auto slash = raw.rfind('/');
    std::string_view last = std::string_view(raw).substr(slash + 1);
    if (slash == std::string::npos || last.empty() || last == "." || last == "..")
        return canonical_dir(raw);
    std::string dir = slash == 0 ? "/" : raw.substr(0, slash);
    std::string path = join_lexically(canonical_dir(dir), last);
    if (!follow_last)
        spelled_cache_->emplace(raw_, path);
    if (follow_last) {
        // Programs are exec'd and headers opened again and again: remember where each lands.
        auto it = follow_cache_->find(path);
        if (it != follow_cache_->end())
            return it->second;
        char buf[PATH_MAX];
        std::string target = ::realpath(path.c_str(), buf) ? std::string(buf) : path;
        follow_cache_->emplace(std::move(path), target);
        return target;
    }
    return path;
}

}  // namespace qk::record
