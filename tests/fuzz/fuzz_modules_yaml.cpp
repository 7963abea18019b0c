// libFuzzer target: pnpm's node_modules/.modules.yaml reader (hoisting, layout). Any bytes must give a
// value or an error naming the file, never a crash or a hang.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qk/workspace/pnpm_modules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    (void)qk::workspace::parse_pnpm_modules_yaml_text(text, "node_modules/.modules.yaml");
    return 0;
}
