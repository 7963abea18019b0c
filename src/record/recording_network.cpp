// RecordingSink::on_net: what a network call means for the recording. A connect reaches its endpoint; a
// datagram sent to an address reaches it too; a datagram holding a DNS message is a lookup, whose question
// names what the command looked up and whose answer what that name resolved to. A send that failed
// (no route, under a declared network) is listed, not reached.
#include <cerrno>

#include "dns_message.hpp"
#include "qk/record/recording_sink.hpp"

namespace qk::record {
namespace {

// A connect that got through, or is getting through (a non-blocking one).
bool reached(long result) { return result == 0 || result == -EINPROGRESS; }

}  // namespace

void RecordingSink::on_net(const NetOp& op)
{
    NetworkUse& net = out_.network();
    if (op.kind == NetOpKind::connect) {
        if (!op.address.empty())
            net.add({op.address, op.port, op.datagram}, op.pid, reached(op.result));
        return;
    }
    if (!op.address.empty() && op.kind == NetOpKind::send)
        net.add({op.address, op.port, true}, op.pid, op.result >= 0);
    if (op.payload.empty())
        return;
    // DNS by what the datagram holds, not by its port: a resolver may ask a server on another port
    auto message = parse_dns_message(op.payload);
    if (!message)
        return;
    net.add_lookup(message->question);
    for (auto& a : message->addresses)
        net.add_answer(std::move(a), message->question);
}

}  // namespace qk::record
