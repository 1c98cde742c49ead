// server/app/admin — the HTTP admin endpoint (admin.listen) on a thread and libuv loop of its own, parsed
// with libhttp-parser, so that nothing the control thread does (a snapshot build) keeps it from answering.
// Bounded: 16 KiB of headers (431) within 2 s, 64 KiB of body (413), 10 s per request, 64 connections (see
// admin.cpp). A bearer token, when set, is required on every request but the static page's (is_public).
// Routes are the daemon's: its handler answers each request at once or later, from any thread.
#pragma once

#include <uv.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resolver/base/address.hpp"

namespace glbd::admin {

struct Request {
    std::string method;
    std::string path;                            // without the query string
    std::string query;                           // after '?', as sent (see query_param)
    std::map<std::string, std::string> headers;  // lower-case names
    std::string body;
};

// The value of `key` in a query string ("a=1&b=x%2Fy" -> b: "x/y"; '+' is a space); nullopt when absent or
// when its escapes are malformed.
std::optional<std::string> query_param(const std::string& query, const std::string& key);

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8";
    std::string body;
    std::vector<std::pair<std::string, std::string>> headers;  // more headers (names and values are ours)
    // When set, the body instead: called on the admin thread each time the piece before is written, it
    // appends the next piece (tens of KiB) and returns false after the last (sent chunked, so that a client
    // tells the end from a cut). It must not block; an exception ends the response unfinished.
    std::function<bool(std::string& out)> stream;
};

// A request's answer: called once, from any thread (after the server stopped, it does nothing).
using Reply = std::function<void(Response)>;
// Runs on the admin thread for each authorised request; answers through `reply`, now or later.
using Handler = std::function<void(const Request&, Reply reply)>;

class Server {
public:
    Server(const SocketAddress& listen, std::string token, Handler handler);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;
    // Binds and listens (as root, before privileges are dropped); throws std::runtime_error naming the
    // address. run() then starts the admin thread; stop() ends it, closing every connection.
    void start();
    void run();
    void stop();

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

// One HTTP request through libhttp-parser, for tests and the fuzzer: the parsed request or an error
// status (400 malformed, 413 too large, 431 headers too large).
struct ParseResult {
    bool complete = false;
    int error_status = 0;
    Request request;
};
ParseResult parse_request(const std::string& bytes);

// Whether the request's Host header names this endpoint by address: an IP address or localhost (any
// port). Checked when there is no token, against DNS rebinding.
bool host_allowed(const Request& request);

// Whether the request may be answered without the token: GET or HEAD of `/`, the status page, which is
// static and holds no data (it asks for the token and sends it with each of its API calls).
bool is_public(const Request& request);

// Whether the request carries `Authorization: Bearer <token>` (always true without a token). The
// comparison takes the same time wherever the first difference is.
bool authorized(const Request& request, const std::string& token);

// The body of PUT /v1/overrides: {"target": "...", "state": "...", "force": true|false (optional)}. Nullopt
// for anything else.
struct OverrideRequest {
    std::string target, state;
    bool force = false;  // kept though it names nothing in the view (a cluster that has yet to join)
};
std::optional<OverrideRequest> parse_override(const std::string& body);

}  // namespace glbd::admin
