#include "dns_message.hpp"

#include <arpa/inet.h>

#include <cstdint>

namespace qk::record {
namespace {

constexpr std::size_t kHeader = 12;
constexpr std::uint16_t kTypeA = 1, kTypeAaaa = 28;

std::uint16_t u16(std::string_view b, std::size_t at)
{
    return static_cast<std::uint16_t>((static_cast<unsigned char>(b[at]) << 8) | static_cast<unsigned char>(b[at + 1]));
}

// Skips a name at `at` (labels, or a compression pointer ending it); npos when it runs off the end.
std::size_t skip_name(std::string_view b, std::size_t at)
{
    while (at < b.size()) {
        auto len = static_cast<unsigned char>(b[at]);
        if (len == 0)
            return at + 1;
        if ((len & 0xC0) == 0xC0)
            return at + 2 <= b.size() ? at + 2 : std::string_view::npos;
        at += 1 + len;
    }
    return std::string_view::npos;
}

// The question's name: plain labels (a question is never compressed), lower case.
std::optional<std::string> question_name(std::string_view b, std::size_t& at)
{
    std::string name;
    while (at < b.size()) {
        auto len = static_cast<unsigned char>(b[at++]);
        if (len == 0)
            return name;
        if (len > 63 || at + len > b.size())
            return std::nullopt;
        if (!name.empty())
            name += '.';
        for (char c : b.substr(at, len))
            name += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
        at += len;
    }
    return std::nullopt;
}

}  // namespace

std::optional<DnsMessage> parse_dns_message(std::string_view b)
{
    if (b.size() < kHeader || u16(b, 4) != 1)  // one question, as every resolver asks
        return std::nullopt;
    const bool response = static_cast<unsigned char>(b[2]) & 0x80;
    std::size_t at = kHeader;
    auto name = question_name(b, at);
    if (!name || name->empty() || at + 4 > b.size())
        return std::nullopt;
    DnsMessage m;
    m.question = std::move(*name);
    at += 4;  // type, class
    if (!response)
        return m;
    for (std::uint16_t n = u16(b, 6); n > 0; --n) {
        at = skip_name(b, at);
        if (at == std::string_view::npos || at + 10 > b.size())
            break;
        const std::uint16_t type = u16(b, at), len = u16(b, at + 8);
        at += 10;
        if (at + len > b.size())
            break;
        char text[INET6_ADDRSTRLEN] = {};
        if ((type == kTypeA && len == 4 && inet_ntop(AF_INET, b.data() + at, text, sizeof(text))) ||
            (type == kTypeAaaa && len == 16 && inet_ntop(AF_INET6, b.data() + at, text, sizeof(text))))
            m.addresses.emplace_back(text);
        at += len;
    }
    return m;
}

}  // namespace qk::record
