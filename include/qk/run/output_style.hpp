// How a run prints its tasks' output: `--output-style`, with Nx's names (docs/qk.md, "What a run prints").
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace qk::run {

enum class OutputStyle : std::uint8_t {
    stream,   // "stream": each line as it comes, prefixed with its task; a restored task's output replayed
    grouped,  // "static": nothing rewritten, no status area; each task's lines together when it ends,
              // a restored task's replayed
    dynamic,  // "dynamic": minimal, the output of failed tasks only; the status area on a terminal
};

// "stream", "static" or "dynamic"; nullopt for anything else.
std::optional<OutputStyle> parse_output_style(std::string_view name);

}  // namespace qk::run
