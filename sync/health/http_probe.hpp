// sync/health/http_probe — HTTP(S) probes through libcurl's multi interface on the checker's loop: a GET of
// the check's path, connected to the endpoint's address whatever the name resolves to, with the host's
// name in the Host header and SNI; healthy when the status is one of the expected ones. Connections are
// kept from round to round. Checker thread only.
#pragma once

#include <curl/curl.h>
#include <uv.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "resolver/base/address.hpp"
#include "sync/health/tcp_probe.hpp"

namespace glbd::health {

struct HttpRequest {
    bool https = false;
    std::string host;  // Host header and SNI (the host's name, a wildcard's base)
    uint16_t port = 80;
    std::string path = "/";
    std::vector<std::pair<std::string, std::string>> headers;
    std::vector<int> expected_status{200, 201};
    bool insecure_skip_verify = false;
    std::chrono::milliseconds timeout{2000};
};

class HttpProber {
public:
    // HTTP(S) targets per libcurl multi handle (each its own pool of kept-alive connections).
    static constexpr size_t kTargetsPerMulti = 16;
    // Finished probes keep their libcurl handle for the next probe, up to this many.
    static constexpr size_t kIdleProbes = 64;

    // `source`: the local address probes of its family leave from (health.sourceAddress); none: the kernel's.
    explicit HttpProber(uv_loop_t* loop, std::optional<Address> source = std::nullopt);
    ~HttpProber();
    HttpProber(const HttpProber&) = delete;
    HttpProber& operator=(const HttpProber&) = delete;

    // Where a new target's probes run: the same pool for kTargetsPerMulti targets in a row.
    size_t assign_pool();
    // One probe of `address` for `request`, in pool `pool`.
    void probe(size_t pool, const HttpRequest& request, const Address& address, ProbeDone done);
    // Ends every probe under way without a result and closes every connection.
    void stop();

    struct Multi;
    struct Probe;

private:
    void check(Multi* multi);
    void release(Probe* p);
    static int socket_cb(CURL* easy, curl_socket_t s, int what, void* userp, void* socketp);
    static int timer_cb(CURLM* multi, long timeout_ms, void* userp);

    uv_loop_t* loop_;
    std::string interface_;  // CURLOPT_INTERFACE for the source address ("host!192.0.2.1"), or ""
    int source_family_ = 0;
    std::vector<std::unique_ptr<Multi>> multis_;
    size_t in_last_ = kTargetsPerMulti;                 // targets in the last multi
    std::map<Probe*, std::unique_ptr<Probe>> running_;  // libcurl's private pointer is the key
    std::vector<std::unique_ptr<Probe>> idle_;          // finished, their handle reset, for the next probe
};

}  // namespace glbd::health
