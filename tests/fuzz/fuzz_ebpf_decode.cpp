// libFuzzer target: the eBPF record decoder, fed bytes as the ring buffer would hand them over (a
// record of any size and content), then delivered into a Recording. A record it cannot read is an
// error (its task's recording is then incomplete), never a crash or a read past the record.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ebpf_decode.hpp"
#include "events.h"
#include "qk/record/recording_sink.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    // An exact-size heap copy: AddressSanitizer catches any read beyond the record's end.
    std::vector<std::uint8_t> record(data, data + size);
    // Most random headers carry another ABI version: make half the inputs carry ours, so the fuzzer
    // spends its time in the decoding itself.
    if (size >= sizeof(qk_event_header) && (data[0] & 1)) {
        qk_u16 abi = QK_ABI_VERSION;
        std::memcpy(record.data() + offsetof(qk_event_header, abi), &abi, sizeof(abi));
    }
    auto rec = qk::record::decode_ebpf_record(record.data(), record.size());
    if (rec) {
        qk::record::Recording recording;
        qk::record::RecordingSink sink(recording);
        qk::record::deliver(*rec, sink);
    }
    return 0;
}
