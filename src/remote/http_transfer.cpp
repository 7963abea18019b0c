#include "http_transfer.hpp"

#include <curl/curl.h>
#include <strings.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include <fmt/format.h>

namespace qk::remote {

namespace {

struct CurlDeleter {
    void operator()(CURL* c) const { curl_easy_cleanup(c); }
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using CurlHandle = std::unique_ptr<CURL, CurlDeleter>;
using HeaderList = std::unique_ptr<curl_slist, CurlDeleter>;

// What the callbacks share with perform(): libcurl calls them on perform()'s own thread.
struct Transfer {
    const HttpClient* client = nullptr;
    CURL* handle = nullptr;
    const HttpRequest* request = nullptr;
    HttpResponse response;
    std::uint64_t sent = 0;
    std::optional<Error> callback_error;  // the sink's or source's, returned as it is
    bool error_page_cut = false;          // an error page was not read to its end: its status stands
    // When a byte last moved either way (or the request began), and how many had: for the WaitNotice.
    std::chrono::steady_clock::time_point last_move = std::chrono::steady_clock::now();
    curl_off_t moved = 0;
};

constexpr std::string_view kTagHeader = "x-artifact-tag:";

std::string_view trimmed(std::string_view s)
{
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t'))
        s.remove_suffix(1);
    return s;
}

// A status line starts each response (a 100 Continue comes before the final one), so it resets what
// the headers said.
std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user)
{
    auto* t = static_cast<Transfer*>(user);
    const std::string_view line(data, size * count);
    if (line.starts_with("HTTP/")) {
        t->response.artifact_tag.clear();
        const auto space = line.find(' ');
        t->response.status = space == std::string_view::npos ? 0 : std::strtol(line.data() + space + 1, nullptr, 10);
    } else if (line.size() > kTagHeader.size() &&
               strncasecmp(line.data(), kTagHeader.data(), kTagHeader.size()) == 0) {
        t->response.artifact_tag = std::string(trimmed(line.substr(kTagHeader.size())));
    }
    return line.size();
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user)
{
    auto* t = static_cast<Transfer*>(user);
    const std::size_t n = size * count;
    t->response.body_bytes += n;
    // An error page (404's HTML, 500's JSON) is nobody's entry, and is not read past 64 KiB: a server
    // sending one without end would hold the run (the status is known already, and kept).
    constexpr std::uint64_t kErrorPage = std::uint64_t{64} << 10;
    if (!(t->response.status >= 200 && t->response.status < 300) && t->response.body_bytes > kErrorPage) {
        t->error_page_cut = true;
        return 0;
    }
    if (t->request->sink && t->response.status >= 200 && t->response.status < 300) {
        if (auto s = (*t->request->sink)(std::string_view(data, n)); !s) {
            t->callback_error = s.error();
            return 0;  // libcurl stops with CURLE_WRITE_ERROR
        }
    }
    return n;
}

std::size_t on_read(char* buf, std::size_t size, std::size_t count, void* user)
{
    auto* t = static_cast<Transfer*>(user);
    const Source& source = *t->request->body;
    const std::uint64_t left = source.size - t->sent;
    if (left == 0)
        return 0;
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(left, size * count));
    auto got = source.read_at(t->sent, buf, want);
    if (!got || *got == 0) {
        t->callback_error = got ? error(fmt::format("the entry ended after {} of its {} bytes", t->sent, source.size))
                                : got.error();
        return CURL_READFUNC_ABORT;
    }
    t->sent += *got;
    return *got;
}

// libcurl rewinds the body when it must send it again (a connection reused and found closed).
int on_seek(void* user, curl_off_t offset, int origin)
{
    auto* t = static_cast<Transfer*>(user);
    if (origin != SEEK_SET || offset < 0 || static_cast<std::uint64_t>(offset) > t->request->body->size)
        return CURL_SEEKFUNC_CANTSEEK;
    t->sent = static_cast<std::uint64_t>(offset);
    return CURL_SEEKFUNC_OK;
}

bool connected(CURL* c)
{
    curl_off_t connect_us = 0;
    (void)curl_easy_getinfo(c, CURLINFO_CONNECT_TIME_T, &connect_us);
    return connect_us > 0;
}

// libcurl's progress callback, called about once a second while a transfer waits: tells the client's
// WaitNotice, once, when nothing has moved for notice_after_s of the timeout that would end the wait.
int on_progress(void* user, curl_off_t /*dltotal*/, curl_off_t dlnow, curl_off_t /*ultotal*/, curl_off_t ulnow)
{
    auto* t = static_cast<Transfer*>(user);
    const auto now = std::chrono::steady_clock::now();
    if (dlnow + ulnow != t->moved) {
        t->moved = dlnow + ulnow;
        t->last_move = now;
        return 0;
    }
    const HttpClient& client = *t->client;
    const bool up = connected(t->handle);
    const unsigned timeout = up ? client.stall_timeout_s : client.connect_timeout_s;
    const auto waited = std::chrono::duration_cast<std::chrono::seconds>(now - t->last_move);
    if (waited.count() < notice_after_s(timeout) || client.waiting->said.exchange(true))
        return 0;
    const std::string what = describe(client, *t->request);
    client.waiting->say(
        up ? fmt::format("waiting for the remote cache: {} has had no answer for {} s; qk gives up on the server "
                         "after {} s without one (QK_REMOTE_CACHE_STALL_TIMEOUT) and goes on without it",
                         what, waited.count(), timeout)
           : fmt::format("waiting for the remote cache: {} has had no connection for {} s; qk gives up on the "
                         "server after {} s (QK_REMOTE_CACHE_CONNECT_TIMEOUT) and goes on without it",
                         what, waited.count(), timeout));
    return 0;
}

const char* method_name(Method m)
{
    switch (m) {
    case Method::head:
        return "HEAD";
    case Method::put:
        return "PUT";
    case Method::get:
        break;
    }
    return "GET";
}

// Which fault a failed transfer was. Whether a connection was made tells a server that is not there (or
// not accepting) from one that stopped answering or hung up midway.
ErrorKind kind_of(CURLcode code, bool connected)
{
    switch (code) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
        return ErrorKind::remote_unreachable;
    case CURLE_OPERATION_TIMEDOUT:
        return connected ? ErrorKind::remote_timeout : ErrorKind::remote_unreachable;
    case CURLE_PARTIAL_FILE:
        return ErrorKind::remote_truncated;
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
        return connected ? ErrorKind::remote_truncated : ErrorKind::remote_unreachable;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
        return ErrorKind::remote_unreachable;
    default:
        return ErrorKind::remote_protocol;
    }
}

// A server that is not there and one that stopped answering are different faults with different remedies:
// each in its own words, libcurl's detail after them.
std::string failure_message(const HttpClient& client, const std::string& what, const std::string& detail,
                            ErrorKind kind, CURLcode code, curl_off_t moved)
{
    if (kind == ErrorKind::remote_timeout)
        return fmt::format("{}: the server is stalled: it accepted the connection, then {} for {} s "
                           "(QK_REMOTE_CACHE_STALL_TIMEOUT); is it stopped or overloaded? ({})",
                           what, moved == 0 ? "answered nothing" : "moved under 1 KiB/s", client.stall_timeout_s,
                           detail);
    if (kind == ErrorKind::remote_unreachable && code == CURLE_OPERATION_TIMEDOUT)
        return fmt::format("{}: the server is unreachable: no connection within {} s "
                           "(QK_REMOTE_CACHE_CONNECT_TIMEOUT); check the URL, the network and that the server runs "
                           "({})",
                           what, client.connect_timeout_s, detail);
    if (kind == ErrorKind::remote_unreachable)
        return fmt::format("{}: the server is unreachable: {}; check the URL (QK_REMOTE_CACHE_URL or nx.json's "
                           "qk.remoteCache.url) and that the server runs",
                           what, detail);
    return fmt::format("{}: {}", what, detail);
}

}  // namespace

unsigned notice_after_s(unsigned timeout_s)
{
    return std::clamp(timeout_s / 2, 1U, 5U);
}

void init_curl_once()
{
    static std::once_flag once;
    std::call_once(once, [] { (void)curl_global_init(CURL_GLOBAL_DEFAULT); });  // failing, every easy_init fails
}

std::string describe(const HttpClient& client, const HttpRequest& request)
{
    return fmt::format("{} {}{}", method_name(request.method), client.shown_url, request.path);
}

Error status_error(long status, const std::string& what)
{
    if (status == 401 || status == 403)
        return error(fmt::format("{}: {} {}: the server refuses this token (a wrong one, or one that may only read)",
                                 what, status, status == 401 ? "Unauthorized" : "Forbidden"),
                     ErrorKind::remote_forbidden);
    if (status >= 500 && status < 600)
        return error(fmt::format("{}: the server failed ({})", what, status), ErrorKind::remote_server);
    if (status == 413)
        return error(fmt::format("{}: 413: the server refuses an entry this large; raise its limit "
                                 "(turborepo-remote-cache: BODY_LIMIT; nginx: client_max_body_size)",
                                 what),
                     ErrorKind::remote_too_large);
    return error(fmt::format("{}: unexpected status {}", what, status), ErrorKind::remote_protocol);
}

Result<Lookup> lookup_of(long status, const std::string& what)
{
    if (status == 404)
        return Lookup::miss;
    if (status == 200)
        return Lookup::hit;
    return status_error(status, what);
}

// The calling thread's handle, reset to no options: libcurl keeps its connections (and their DNS entries)
// across a reset, so a thread's next transfer to the same server reuses the connection instead of opening
// one per entry (a run restoring 1,000 entries opened 1,000 before). A dead connection is found and replaced
// by libcurl itself. Freed when the thread ends.
CURL* thread_handle()
{
    thread_local CurlHandle handle(curl_easy_init());
    if (handle)
        curl_easy_reset(handle.get());
    return handle.get();
}

Result<HttpResponse> perform(const HttpClient& client, const HttpRequest& request)
{
    init_curl_once();
    const std::string what = describe(client, request);
    CURL* c = thread_handle();
    if (!c)
        return error(what + ": libcurl could not make a handle", ErrorKind::remote_protocol);
    Transfer t;
    t.client = &client;
    t.handle = c;
    t.request = &request;
    const std::string url = client.base_url + request.path;
    HeaderList headers;
    auto add_header = [&headers](const std::string& h) {
        curl_slist* l = curl_slist_append(headers.get(), h.c_str());
        if (!l)
            return false;  // the list is as it was, still owned
        (void)headers.release();  // `l` is that list grown (or a new one where there was none)
        headers.reset(l);
        return true;
    };
    bool headers_ok = true;
    if (!client.bearer.empty())
        headers_ok = add_header("Authorization: Bearer " + client.bearer);
    for (const auto& h : request.headers)
        headers_ok = headers_ok && add_header(h);
    if (!headers_ok)
        return error(what + ": out of memory for the request's headers", ErrorKind::remote_protocol);

    char errbuf[CURL_ERROR_SIZE] = {};
    // Options that cannot fail on a libcurl that has them (7.85 or later, as Debian 12's 7.88).
    (void)curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    (void)curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    (void)curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    (void)curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe with threads
    (void)curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, static_cast<long>(client.connect_timeout_s));
    // Under 1 KiB/s on average over the stall time is a stall too: a server sending a byte now and then
    // would otherwise hold a transfer, and the run, for ever.
    (void)curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1024L);
    (void)curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, static_cast<long>(client.stall_timeout_s));
    (void)curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    (void)curl_easy_setopt(c, CURLOPT_USERAGENT, "qk-remote-cache");
    (void)curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    (void)curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
    (void)curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    (void)curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
    if (client.waiting && client.waiting->say) {
        (void)curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
        (void)curl_easy_setopt(c, CURLOPT_XFERINFODATA, &t);
        (void)curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    }
    switch (request.method) {
    case Method::head:
        (void)curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
        break;
    case Method::put:
        (void)curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        (void)curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.body->size));
        (void)curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
        (void)curl_easy_setopt(c, CURLOPT_READDATA, &t);
        (void)curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, on_seek);
        (void)curl_easy_setopt(c, CURLOPT_SEEKDATA, &t);
        break;
    case Method::get:
        break;
    }

    const CURLcode code = curl_easy_perform(c);
    if (t.callback_error)
        return *t.callback_error;
    if (t.error_page_cut)
        return t.response;  // answered by its status, as a short error page would be
    if (code != CURLE_OK) {
        const std::string detail = errbuf[0] ? std::string(errbuf) : curl_easy_strerror(code);
        const ErrorKind kind = kind_of(code, connected(c));
        return error(failure_message(client, what, detail, kind, code, t.moved), kind);
    }
    curl_off_t announced = -1;
    (void)curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
    if (request.method != Method::head && announced >= 0 &&
        t.response.body_bytes != static_cast<std::uint64_t>(announced))
        return error(fmt::format("{}: {} of the {} bytes announced arrived", what, t.response.body_bytes, announced),
                     ErrorKind::remote_truncated);
    return t.response;
}

}  // namespace qk::remote
