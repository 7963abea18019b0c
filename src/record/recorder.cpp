#include <memory>

#include "qk/record/recorder.hpp"
#include "strace_recorder.hpp"
#ifdef QK_WITH_BPF
#include "ebpf_recorder.hpp"
#endif

namespace qk::record {

Result<RecorderChoice> parse_recorder_choice(std::string_view text)
{
    if (text == "auto" || text.empty())
        return RecorderChoice::automatic;
    if (text == "ebpf")
        return RecorderChoice::ebpf;
    if (text == "strace")
        return RecorderChoice::strace;
    return error("unknown recorder '" + std::string(text) + "': use auto, ebpf or strace");
}

Result<std::unique_ptr<Recorder>> make_recorder(RecorderChoice choice, const RecorderSettings& settings,
                                                std::string* why_none, std::string* why_not_ebpf)
{
    std::string ebpf_why;
#ifdef QK_WITH_BPF
    if (choice != RecorderChoice::strace) {
        auto ebpf = EbpfRecorder::create(settings);
        if (ebpf)
            return std::unique_ptr<Recorder>(std::move(ebpf).value());
        if (choice == RecorderChoice::ebpf)
            return with_message(ebpf.error(), "the eBPF recorder cannot record here: " + ebpf.error().message);
        // Its first line: libbpf's log below it helps with an explicit --recorder ebpf, not here.
        ebpf_why = ebpf.error().message.substr(0, ebpf.error().message.find('\n'));
    }
#else
    (void)settings;
    if (choice == RecorderChoice::ebpf)
        return error("the eBPF recorder is not built in (configured with QK_WITH_BPF=OFF)");
    ebpf_why = "not built in";
#endif
    auto strace = StraceRecorder::create();
    if (strace) {
        if (why_not_ebpf)
            *why_not_ebpf = ebpf_why;
        return std::unique_ptr<Recorder>(std::move(strace).value());
    }
    if (choice == RecorderChoice::strace)
        return with_message(strace.error(), "the strace recorder cannot record here: " + strace.error().message);
    if (why_none)
        *why_none = "no recorder works here: eBPF: " + ebpf_why + "; strace: " + strace.error().message;
    return std::unique_ptr<Recorder>();
}

}  // namespace qk::record
