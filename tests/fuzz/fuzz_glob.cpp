// libFuzzer target: the glob compiler (inputs, outputs, ignoreReads) and the matcher. The first line
// is the pattern, the rest are paths matched against it. A pattern it cannot read is an error with its
// column; a compiled one must answer every question about any path without crashing or hanging.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qk/workspace/glob.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    std::size_t nl = text.find('\n');
    std::string_view pattern = text.substr(0, nl);
    for (auto compiled : {qk::workspace::Glob::compile(pattern), qk::workspace::Glob::compile_fileset(pattern)}) {
        if (!compiled)
            continue;
        (void)compiled->literal_prefix();
        (void)compiled->expansion();
        for (std::size_t start = nl; start != std::string_view::npos && start < text.size();) {
            std::size_t end = text.find('\n', start + 1);
            std::string_view path = text.substr(start + 1, end == std::string_view::npos ? end : end - start - 1);
            (void)compiled->matches(path);
            (void)compiled->may_match_under(path);
            start = end;
        }
    }
    return 0;
}
