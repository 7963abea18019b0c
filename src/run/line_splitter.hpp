// LineSplitter: cuts a stream of bytes into lines as they arrive, for output shown line by line.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace qk::run {

class LineSplitter {
public:
    // A longer line is passed on in pieces of this size, so that a command printing without newlines
    // (a progress bar) is neither held back nor buffered without bound.
    static constexpr std::size_t kMaxLine = std::size_t{64} * 1024;
    // A piece is a line with its '\n', or a part of one without it.
    using PieceFn = std::function<void(std::string_view piece)>;

    void feed(std::string_view data, const PieceFn& fn);
    // Passes on what is left: a last line without its '\n'.
    void flush(const PieceFn& fn);

private:
    std::string partial_;
};

// A piece without its "\n" or "\r\n": the text to show.
std::string_view line_text(std::string_view piece);

// Calls fn with the text of each line of `text`, a last line without '\n' included.
void for_each_line(std::string_view text, const std::function<void(std::string_view line)>& fn);

}  // namespace qk::run
