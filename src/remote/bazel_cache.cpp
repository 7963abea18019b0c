#include "bazel_cache.hpp"

#include <charconv>
#include <utility>

#include <fmt/format.h>

#include "digest.hpp"

namespace qk::remote {

namespace {

constexpr std::string_view kPointerMagic = "qk-entry-v1 ";
// A pointer is about 90 bytes; an action cache answering more is not holding one of ours.
constexpr std::size_t kMaxPointer = 1024;

bool is_sha256_hex(std::string_view s)
{
    return s.size() == 64 && s.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string cas_path(std::string_view sha256) { return fmt::format("/cas/{}", sha256); }

bool stored(long status) { return status == 200 || status == 201 || status == 204; }

// A PUT refused: nginx answers 500 to every PUT when its worker may not write the directory.
Error put_error(long status, const std::string& what)
{
    Error e = status_error(status, what);
    if (status == 500)
        e.message += " (nginx: the worker's user, `user` in nginx.conf, must own the cache directory; see "
                     "docs/remote-cache.md)";
    return e;
}

}  // namespace

std::string format_pointer(const CasPointer& p) { return fmt::format("{}{} {}\n", kPointerMagic, p.sha256, p.size); }

std::optional<CasPointer> parse_pointer(std::string_view text)
{
    if (!text.starts_with(kPointerMagic) || !text.ends_with('\n'))
        return std::nullopt;
    text.remove_prefix(kPointerMagic.size());
    text.remove_suffix(1);
    const auto space = text.find(' ');
    if (space == std::string_view::npos || !is_sha256_hex(text.substr(0, space)))
        return std::nullopt;
    CasPointer p{std::string(text.substr(0, space)), 0};
    const std::string_view size = text.substr(space + 1);
    const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), p.size);
    if (ec != std::errc() || end != size.data() + size.size() || size.empty())
        return std::nullopt;
    return p;
}

std::string ac_path(std::string_view key) { return "/ac/" + sha256_hex(fmt::format("qk-entry:{}", key)); }

BazelCache::BazelCache(HttpClient client) : client_(std::move(client)) {}

std::string BazelCache::describe() const { return "bazel " + client_.shown_url; }

Result<std::optional<CasPointer>> BazelCache::pointer(std::string_view key) const
{
    QK_TRY_STATUS(check_key(key, describe()));
    std::string body;
    const Sink into_body = [&body](std::string_view chunk) -> Status {
        if (body.size() + chunk.size() > kMaxPointer)
            return error(fmt::format("more than {} bytes", kMaxPointer), ErrorKind::remote_protocol);
        body.append(chunk);
        return {};
    };
    const HttpRequest request{Method::get, ac_path(key), {}, nullptr, &into_body};
    const std::string what = remote::describe(client_, request);
    auto response = perform(client_, request);
    if (!response)
        return response.error().kind == ErrorKind::remote_protocol
                   ? with_message(response.error(), fmt::format("{}: {}", what, response.error().message))
                   : response.error();
    QK_TRY(found, lookup_of(response->status, what));
    if (*found == Lookup::miss)
        return std::optional<CasPointer>();
    auto p = parse_pointer(body);
    if (!p)
        return error(fmt::format("{}: the action cache holds something other than a qk entry's pointer", what),
                     ErrorKind::remote_protocol);
    return p;
}

Result<Lookup> BazelCache::exists(std::string_view key) const
{
    QK_TRY(p, pointer(key));
    if (!*p)
        return Lookup::miss;
    const HttpRequest request{Method::head, cas_path((*p)->sha256), {}, nullptr, nullptr};
    QK_TRY(response, perform(client_, request));
    // A pointer whose blob the server evicted is a miss.
    return lookup_of(response->status, remote::describe(client_, request));
}

Result<Lookup> BazelCache::get(std::string_view key, const Sink& sink) const
{
    QK_TRY(p, pointer(key));
    if (!*p)
        return Lookup::miss;
    const CasPointer& want = **p;
    Sha256 sha;
    std::uint64_t got = 0;
    const Sink checked = [&](std::string_view chunk) -> Status {
        got += chunk.size();
        if (got > want.size)
            return error(fmt::format("{}: the blob is longer than the {} bytes its pointer says", describe(), want.size),
                         ErrorKind::remote_tampered);
        sha.update(chunk);
        return sink(chunk);
    };
    const HttpRequest request{Method::get, cas_path(want.sha256), {}, nullptr, &checked};
    const std::string what = remote::describe(client_, request);
    QK_TRY(response, perform(client_, request));
    QK_TRY(found, lookup_of(response->status, what));
    if (*found == Lookup::miss)  // the blob evicted since the pointer was written
        return Lookup::miss;
    if (got != want.size)
        return error(fmt::format("{}: {} bytes where the pointer says {}", what, got, want.size),
                     ErrorKind::remote_truncated);
    if (hex(sha.finish()) != want.sha256)
        return error(fmt::format("{}: the blob's SHA-256 is not its address: refused", what),
                     ErrorKind::remote_tampered);
    return Lookup::hit;
}

Status BazelCache::put(std::string_view key, const Source& source) const
{
    return store(key, source, false);
}

Status BazelCache::replace(std::string_view key, const Source& source) const
{
    return store(key, source, true);
}

Status BazelCache::store(std::string_view key, const Source& source, bool replacing) const
{
    QK_TRY_STATUS(check_key(key, describe()));
    // The blob's address is its digest: a first pass over the source.
    Sha256 sha;
    QK_TRY_STATUS(read_source(source, [&sha](std::string_view chunk) { sha.update(chunk); }));
    const CasPointer p{hex(sha.finish()), source.size};

    // A blob the server holds already (the same outputs under another key) is not sent again, unless an
    // entry was refused: the blob at this address may be the damaged one.
    bool held = false;
    if (!replacing) {
        const HttpRequest head{Method::head, cas_path(p.sha256), {}, nullptr, nullptr};
        QK_TRY(answer, perform(client_, head));
        held = answer->status == 200;
    }
    if (!held) {
        const HttpRequest blob{Method::put, cas_path(p.sha256), {"Content-Type: application/octet-stream"}, &source,
                               nullptr};
        QK_TRY(response, perform(client_, blob));
        if (!stored(response->status))
            return put_error(response->status, remote::describe(client_, blob));
    }
    const std::string text = format_pointer(p);
    const Source pointer_source{text.size(), [&text](std::uint64_t offset, char* buf, std::size_t len) {
                                    const std::size_t n = std::min<std::size_t>(len, text.size() - offset);
                                    text.copy(buf, n, offset);
                                    return Result<std::size_t>(n);
                                }};
    const HttpRequest ac{Method::put, ac_path(key), {"Content-Type: application/octet-stream"}, &pointer_source,
                         nullptr};
    QK_TRY(response, perform(client_, ac));
    if (!stored(response->status))
        return put_error(response->status, remote::describe(client_, ac));
    return {};
}

}  // namespace qk::remote
