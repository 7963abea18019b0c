// One HTTP request through libcurl, bodies streamed both ways, with the remote cache's timeouts, and the
// ErrorKind each way a transfer can fail maps to. The protocols (turbo_cache.cpp, bazel_cache.cpp) say
// which requests to make and what their answers mean.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qk/remote/remote_cache.hpp"
#include "qk/util/result.hpp"

namespace qk::remote {

// Who is told, once for all the copies of a client, that a request has waited long without a byte moving:
// a stalled server would otherwise hold the run for the whole stall timeout in silence.
struct WaitNotice {
    Waiting say;
    std::atomic<bool> said{false};
};

// What every request of one client shares.
struct HttpClient {
    std::string base_url;     // as configured: may hold user:password for basic auth (never printed)
    std::string shown_url;    // base_url without credentials, for messages
    std::string bearer;       // a token to send as "Authorization: Bearer", else empty
    unsigned connect_timeout_s = 10;
    unsigned stall_timeout_s = 30;
    std::shared_ptr<WaitNotice> waiting;  // null: nobody to tell
};

// How long a request waits without a byte moving before the WaitNotice is told: half of the timeout that
// will end it, at least 1 s and at most 5 s (noticeable, and said well before it gives up).
unsigned notice_after_s(unsigned timeout_s);

enum class Method : std::uint8_t { head, get, put };

struct HttpRequest {
    Method method = Method::get;
    std::string path;                  // after base_url: "/v8/artifacts/<key>?slug=..."
    std::vector<std::string> headers;  // "Name: value"
    const Source* body = nullptr;      // put's body
    const Sink* sink = nullptr;        // get's body, when the status is 2xx (other bodies are dropped)
};

struct HttpResponse {
    long status = 0;
    std::string artifact_tag;  // the x-artifact-tag header, else empty
    std::uint64_t body_bytes = 0;
};

// Makes the request. An answer with any status is a response; no answer (refused, timed out, cut off)
// is an Error whose kind says which, as is an error of the sink or source (returned unchanged).
Result<HttpResponse> perform(const HttpClient& client, const HttpRequest& request);

// The Error for a status the caller did not expect: 401/403 remote_forbidden, 5xx remote_server, any
// other remote_protocol. `what` names the request ("GET <url>").
Error status_error(long status, const std::string& what);

// What a HEAD's or GET's status says of the entry: 200 hit, 404 miss, anything else status_error.
Result<Lookup> lookup_of(long status, const std::string& what);

// "GET http://host/path" with no credentials in it.
std::string describe(const HttpClient& client, const HttpRequest& request);

// An Error unless `key` is one RemoteCache takes (valid_key); `where` names the cache.
Status check_key(std::string_view key, const std::string& where);

// curl_global_init, once a process.
void init_curl_once();

}  // namespace qk::remote
