#include "qk/record/path_resolver.hpp"

#include <limits.h>
#include <stdlib.h>

#include <cstdlib>
#include <optional>

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

// What follows "/proc/<self|thread-self|pid>/" (and a "task/<tid>/" after it), if `path` starts so.
std::optional<std::string_view> in_proc_of_a_process(std::string_view path)
{
    if (!path.starts_with("/proc/"))
        return std::nullopt;
    auto rest = path.substr(6);
    auto slash = rest.find('/');
    auto who = rest.substr(0, slash);
    bool pid = !who.empty() && who.find_first_not_of("0123456789") == std::string_view::npos;
    if (slash == std::string_view::npos || !(pid || who == "self" || who == "thread-self"))
        return std::nullopt;
    rest = rest.substr(slash + 1);
    if (rest.starts_with("task/"))
        if (auto tid_end = rest.find('/', 5); tid_end != std::string_view::npos)
            rest = rest.substr(tid_end + 1);
    return rest;
}

bool is_std_stream(std::string_view path)
{
    return path == "/dev/stdin" || path == "/dev/stdout" || path == "/dev/stderr";
}

}  // namespace

bool PathResolver::per_process(std::string_view path)
{
    return in_proc_of_a_process(path) || path == "/dev/fd" || path.starts_with("/dev/fd/") || is_std_stream(path);
}

bool PathResolver::through_descriptor(std::string_view path)
{
    if (path.starts_with("/dev/fd/") || is_std_stream(path))
        return true;
    auto rest = in_proc_of_a_process(path);
    return rest && (rest->starts_with("fd/") || *rest == "cwd" || rest->starts_with("cwd/") || *rest == "root" ||
                    rest->starts_with("root/"));
}

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
    // then the name), and a hostile one "/dev/./fd/3"; paths without "/proc" or "/dev/" cost a search.
    if (raw.find("/proc") != std::string::npos || raw.find("/dev/") != std::string::npos)
        if (std::string lexical = join_lexically("", raw); per_process(lexical))
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
