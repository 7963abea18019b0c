#include "qk/remote/remote_cache.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <cerrno>
#include <memory>

#include <fmt/format.h>

#include "bazel_cache.hpp"
#include "http_transfer.hpp"
#include "qk/util/io.hpp"
#include "turbo_cache.hpp"

namespace qk::remote {

namespace {

struct UrlDeleter {
    void operator()(CURLU* u) const { curl_url_cleanup(u); }
};

// Whether libcurl parses `url` as an http(s) address with a host, the way it will when it sends to it.
bool parses(const std::string& url)
{
    const std::unique_ptr<CURLU, UrlDeleter> u(curl_url());
    if (!u || curl_url_set(u.get(), CURLUPART_URL, url.c_str(), 0) != CURLUE_OK)
        return false;
    char* host = nullptr;
    const bool has_host = curl_url_get(u.get(), CURLUPART_HOST, &host, 0) == CURLUE_OK && host && *host;
    curl_free(host);
    return has_host;
}

}  // namespace

bool valid_key(std::string_view key)
{
    return !key.empty() && key.size() <= 128 && key.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

Status check_key(std::string_view key, const std::string& where)
{
    if (valid_key(key))
        return {};
    return error(fmt::format("{}: '{}' is not a cache key (1 to 128 lower-case hex digits)", where, key));
}

Source file_source(int fd, std::uint64_t size)
{
    return Source{size, [fd](std::uint64_t offset, char* buf, std::size_t len) -> Result<std::size_t> {
                      const ssize_t n = retry_eintr([&] { return ::pread(fd, buf, len, static_cast<off_t>(offset)); });
                      if (n < 0)
                          return sys_error("reading the entry to upload");
                      return static_cast<std::size_t>(n);
                  }};
}

Result<std::unique_ptr<RemoteCache>> make_remote_cache(const RemoteServer& server, Waiting waiting)
{
    init_curl_once();
    HttpClient client{
        server.url, url_without_credentials(server.url), server.token, server.connect_timeout_s, server.stall_timeout_s,
        nullptr};
    if (waiting) {
        client.waiting = std::make_shared<WaitNotice>();
        client.waiting->say = std::move(waiting);
    }
    if (server.url.empty() || !parses(server.url))
        return error(fmt::format("the remote cache's URL '{}' (QK_REMOTE_CACHE_URL or nx.json's qk.remoteCache.url) is "
                                 "not an address libcurl can reach",
                                 client.shown_url));
    switch (server.protocol) {
    case Protocol::bazel: return std::unique_ptr<RemoteCache>(std::make_unique<BazelCache>(std::move(client)));
    case Protocol::turbo: break;
    }
    return std::unique_ptr<RemoteCache>(
        std::make_unique<TurboCache>(std::move(client), server.team, server.signature_key));
}

}  // namespace qk::remote
