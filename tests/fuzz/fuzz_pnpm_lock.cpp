// libFuzzer target: the pnpm lockfile reader (libyaml events into the package model).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qk/workspace/pnpm_closure.hpp"
#include "qk/workspace/pnpm_lock.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    auto lock = qk::workspace::parse_pnpm_lock_text(text, "pnpm-lock.yaml");
    if (lock && lock->find_importer(".")) {
        std::string root = ".";
        (void)qk::workspace::importer_closure(*lock, std::span<const std::string>(&root, 1));
    }
    return 0;
}
