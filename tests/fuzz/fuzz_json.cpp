// libFuzzer target: the configuration JSON reader (nx.json, project.json, package.json). Any bytes must
// give a value or an error with a position, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>

#include "qk/workspace/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    // Both dialects: the configuration's (trailing commas allowed) and qk's own files' (refused).
    for (auto commas : {qk::workspace::TrailingCommas::allow, qk::workspace::TrailingCommas::refuse}) {
        auto json = qk::workspace::parse_json(text, "fuzz.json", commas);
        if (json) {
            (void)json->dump();
            (void)json->canonical();
        }
    }
    return 0;
}
