// The symbolic names strace prints for constants (O_*, AT_*, RENAME_*, CLONE_*, errno and signal
// names), mapped back to this machine's numbers. Under `-X raw` strace prints numbers instead.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace qk::record::strace {

std::optional<std::uint64_t> open_flag(std::string_view name);
std::optional<std::uint64_t> at_flag(std::string_view name);
std::optional<std::uint64_t> rename_flag(std::string_view name);
// Every CLONE_* name and the exit signal's name are accepted; only the bits the parser acts on
// (CLONE_THREAD, CLONE_FS, ...) carry their value, the rest count as 0.
std::optional<std::uint64_t> clone_flag(std::string_view name);
std::optional<std::uint64_t> open_tree_flag(std::string_view name);  // OPEN_TREE_* and AT_*
std::optional<std::uint64_t> mount_flag(std::string_view name);      // MS_*: those deciding aliases

std::optional<int> errno_number(std::string_view name);   // "ENOENT" -> 2
std::optional<int> signal_number(std::string_view name);  // "SIGKILL" -> 9, "SIGRT_1" -> 33

}  // namespace qk::record::strace
