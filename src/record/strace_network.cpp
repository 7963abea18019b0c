// The strace parser's network calls: socket (to know a descriptor's type, which -y does not show),
// connect, and the datagram calls sendto, sendmsg, sendmmsg, recvfrom and recvmsg, decoded into NetOp as
// the eBPF engine sends them (bpf/events.h, enum qk_net_op). strace prints a socket address either raw
// (-X raw: sin_port="\x00\x35", sin_addr="\x7f\x00\x00\x01") or by name (htons(53), inet_addr("...")).
#include <arpa/inet.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>

#include "strace_parser.hpp"

namespace qk::record {
namespace {

using strace::Call;
using strace::Return;

std::optional<std::uint64_t> number(std::string_view text)
{
    std::uint64_t v = 0;
    int base = 10;
    if (text.starts_with("0x")) {
        text.remove_prefix(2);
        base = 16;
    }
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
    if (ec != std::errc() || end != text.data() + text.size())
        return std::nullopt;
    return v;
}

// AF_INET or AF_INET6 from "AF_INET6" or "0xa"; 0 for any other family.
int family_of(std::string_view text)
{
    if (text == "AF_INET")
        return AF_INET;
    if (text == "AF_INET6")
        return AF_INET6;
    auto n = number(text);
    return n && (*n == AF_INET || *n == AF_INET6) ? static_cast<int>(*n) : 0;
}

// A quoted field's raw bytes ("\x00\x35"), or the text inside a call such as htons(53) or
// inet_addr("127.0.0.1").
std::optional<std::string> inside(std::string_view text, std::string_view call)
{
    if (!text.starts_with(call) || !text.ends_with(')'))
        return std::nullopt;
    return std::string(text.substr(call.size(), text.size() - call.size() - 1));
}

// "{sa_family=..., sin_port=..., sin_addr=...}" into the op's address and port; false for another family
// or a shape not understood.
bool read_sockaddr(std::string_view text, NetOp& op)
{
    auto fam = strace::struct_field(text, "sa_family");
    const int family = fam ? family_of(*fam) : 0;
    if (family == 0)
        return false;
    const bool v6 = family == AF_INET6;
    auto port = strace::struct_field(text, v6 ? "sin6_port" : "sin_port");
    if (!port)
        return false;
    if (auto raw = strace::parse_quoted(*port); raw && raw->bytes.size() == 2)
        op.port = static_cast<std::uint16_t>((static_cast<unsigned char>(raw->bytes[0]) << 8) |
                                             static_cast<unsigned char>(raw->bytes[1]));
    else if (auto n = inside(*port, "htons("); n && number(*n))
        op.port = static_cast<std::uint16_t>(*number(*n));
    else
        return false;
    char buf[INET6_ADDRSTRLEN] = {};
    auto addr = strace::struct_field(text, v6 ? "sin6_addr" : "sin_addr");
    if (addr) {
        auto raw = strace::parse_quoted(*addr);
        if (raw && raw->bytes.size() == (v6 ? 16U : 4U) && inet_ntop(family, raw->bytes.data(), buf, sizeof(buf))) {
            op.address = buf;
            return true;
        }
        auto named = inside(*addr, "inet_addr(");
        auto q = named ? strace::parse_quoted(*named) : Result<strace::Quoted>(error(""));
        if (q)
            op.address = q->bytes;
        return q.ok();
    }
    // inet_pton(AF_INET6, "::1", &sin6_addr): an item of its own, not a field
    auto at = text.find("inet_pton(AF_INET6, ");
    if (at == std::string_view::npos)
        return false;
    auto q = strace::parse_quoted(text.substr(at + 20, text.find(',', at + 20) - at - 20));
    if (q)
        op.address = q->bytes;
    return q.ok();
}

// The first iov_base of "msg_iov=[{iov_base="...", iov_len=N}, ...]".
std::string first_iov(std::string_view msghdr)
{
    auto iov = strace::struct_field(msghdr, "msg_iov");
    if (!iov || !iov->starts_with('['))
        return {};
    auto base = strace::struct_field(iov->substr(1), "iov_base");
    auto q = base ? strace::parse_quoted(*base) : Result<strace::Quoted>(error(""));
    return q ? q->bytes : std::string();
}

}  // namespace

bool StraceParser::decodes_network(std::string_view name)
{
    return name == "socket" || name == "connect" || name == "sendto" || name == "sendmsg" || name == "sendmmsg" ||
           name == "recvfrom" || name == "recvmsg";
}

Status StraceParser::decode_network(Task& t, const Call& call, const Return& ret)
{
    if (call.args.empty())
        return {};
    if (call.name == "socket") {
        // socket(AF_INET, SOCK_DGRAM|SOCK_CLOEXEC, IPPROTO_IP) = 3: the descriptor is the result
        if (call.args.size() < 2 || ret.value < 0)
            return {};
        const auto key = std::pair(t.tgid, static_cast<int>(ret.value));
        if (family_of(call.args[0]) == 0) {
            socket_types_.erase(key);
            return {};
        }
        std::string_view type = call.args[1];
        auto n = number(type.substr(0, type.find('|')));
        socket_types_[key] = type.starts_with("SOCK_DGRAM") || (n && (*n & 0xf) == SOCK_DGRAM);
        return {};
    }
    QK_TRY(fd, strace::parse_fd(call.args[0]));
    const auto socket = std::pair(t.tgid, static_cast<int>(fd->fd));
    auto type = socket_types_.find(socket);
    if (type == socket_types_.end())
        return {};  // not an AF_INET or AF_INET6 socket this parser saw made
    NetOp op;
    op.pid = t.tgid;
    op.fd = static_cast<int>(fd->fd);
    op.result = ret.value;
    op.datagram = type->second;
    if (call.name == "connect") {
        op.kind = NetOpKind::connect;
        if (call.args.size() >= 2 && read_sockaddr(call.args[1], op))
            sink_.on_net(op);
        return {};
    }
    const bool receiving = call.name == "recvfrom" || call.name == "recvmsg";
    // A failed send is kept with its error, as the eBPF recorder keeps it (without its payload, which
    // that recorder reads only of what was sent); a receive that got nothing says nothing.
    if (!op.datagram || (receiving && ret.value <= 0))
        return {};
    if (!receiving && (ret.value == -EAGAIN || ret.value == -EINTR || ret.value == -ENOBUFS))
        return {};  // tried again by its sender, refusing nothing (as the eBPF recorder leaves them)
    op.kind = receiving ? NetOpKind::recv : NetOpKind::send;
    if (call.name == "sendto" || call.name == "recvfrom") {
        if (call.args.size() < 6)
            return {};
        if (auto q = strace::parse_quoted(call.args[1]))
            op.payload = std::move(q->bytes);
        if (call.args[4] != "NULL" && !read_sockaddr(call.args[4], op))
            return {};
    } else {
        // sendmsg's and recvmsg's msghdr; sendmmsg's first message's, in its msg_hdr
        std::string_view hdr = call.args.size() >= 2 ? call.args[1] : std::string_view();
        if (call.name == "sendmmsg") {
            auto inner = hdr.starts_with('[') ? strace::struct_field(hdr.substr(1), "msg_hdr") : std::nullopt;
            if (!inner)
                return {};
            hdr = *inner;
        }
        op.payload = first_iov(hdr);
        auto name = strace::struct_field(hdr, "msg_name");
        if (name && *name != "NULL" && !read_sockaddr(*name, op))
            return {};
    }
    if (ret.value < 0)
        op.payload.clear();
    sink_.on_net(op);
    return {};
}

}  // namespace qk::record
