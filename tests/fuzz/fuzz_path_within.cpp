// libFuzzer target: the containment test and the plain-path test (qk/util/path_within.hpp) and the
// special-name rule, which decide where a task may write and where a restore or an applied upper layer
// writes. Not a parser, so it checks answers, not only that they come: the input is a path, then after
// the first newline a directory, each held to the slow reference of the unit tests; a disagreement, or
// a plain path that lexically_normal takes out of its root, aborts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>

#include "path_within_reference.hpp"
#include "qk/util/path_within.hpp"
#include "qk/util/special_names.hpp"

namespace {

void require(bool ok)
{
    if (!ok)
        std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const std::size_t nl = text.find('\n');
    const std::string path(text.substr(0, nl));
    const std::string dir(nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1));

    const bool under = qk::is_under(path, dir);
    require(under == qk_reference::is_under(path, dir));
    require(!under || (path.starts_with(dir) && path.size() > dir.size()));
    require(qk::is_within(path, dir) == (path == dir || under));
    if (auto rest = qk::relative_under(path, dir)) {
        require(under);
        const std::string joined = dir.empty() ? std::string(*rest) : dir == "/" ? "/" + std::string(*rest)
                                                                               : dir + "/" + std::string(*rest);
        require(joined == path);
    } else {
        require(!under);
    }

    for (const std::string& p : {path, dir}) {
        const bool plain = qk::is_plain_relative(p);
        require(plain == qk_reference::is_plain_relative(p));
        if (plain) {
            const std::string joined = (std::filesystem::path("/w/root") / p).lexically_normal().string();
            require(qk::is_under(joined, "/w/root") && joined == "/w/root/" + p);
        }
        if (!p.starts_with('/'))
            require(static_cast<int>(qk::special_tree(p)) == qk_reference::special_tree(p));
    }
    return 0;
}
