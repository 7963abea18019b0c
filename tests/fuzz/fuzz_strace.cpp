// libFuzzer target: the strace output parser, line by line into a Recording, as the strace recorder
// feeds it. A line it cannot read is an error (and an incomplete recording), never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "qk/record/recording_sink.hpp"
#include "strace_parser.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    std::string_view text(reinterpret_cast<const char*>(data), size);
    qk::record::Recording recording;
    qk::record::RecordingSink sink(recording);
    qk::record::StraceParser parser(sink, "/fuzz");
    for (std::size_t start = 0; start <= text.size();) {
        std::size_t nl = text.find('\n', start);
        std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        (void)parser.feed(text.substr(start, end - start));
        start = end + 1;
    }
    (void)parser.finish();
    return 0;
}
