// sync/kube/client — a Kubernetes list-and-watch client for one resource path, on its own thread, with libcurl
// and nlohmann-json. List, then watch from the list's resourceVersion with bookmarks; the event stream is
// read as lines (an event may span any number of chunks); 410 Gone (as HTTP status or as an ERROR event)
// relists; errors reconnect with backoff (1 s doubling to 30 s, back to 1 s after a minute of health); each
// watch asks for a random timeout of 5-10 minutes. The bearer token file is re-read every minute and on 401.
// What the client holds (the objects by "namespace/name") is read by the control thread through objects();
// `on_change` runs on the client's thread after each change and must only wake the control thread.
// Never throws out of its thread; a malformed event is counted and skipped.
#pragma once

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "conf/config.hpp"
#include "resolver/base/mutex.hpp"

namespace glbd::kube {

// Where the API server is and how to prove who we are.
struct ApiAccess {
    std::string server;             // "https://host:port" (IPv6 bracketed), or http:// to loopback
    std::string ca_file, ca_data;   // the server's CA: a PEM file or PEM text
    std::string token, token_file;  // bearer token, or a file holding it (re-read: tokens rotate)
    std::string cert_file, key_file, cert_data, key_data;  // a client certificate
    std::string namespace_;                                // the context's or the service account's namespace
    // From the config: a kubeconfig file (its current context), an explicit URL (with the service account's
    // token and CA when present), or in-cluster (KUBERNETES_SERVICE_HOST/PORT and the service account files
    // under `sa_dir`). Throws std::runtime_error naming what is missing or wrong.
    static ApiAccess from(const conf::Kubernetes& k,
                          const std::string& sa_dir = "/var/run/secrets/kubernetes.io/serviceaccount");
};

struct WatchStats {
    std::atomic<uint64_t> events{0}, relists{0}, errors{0}, bad_events{0};
    std::atomic<uint64_t> last_event_ms{0};  // wall clock of the last event or list
    std::atomic<bool> synced{false};         // a list has completed; the watch is open or reopening
};

// One line of a watch stream. `ok` is false for anything that is not an object with a string "type" and an
// object "object"; `code` is an ERROR event's status code (410: Gone).
struct WatchEvent {  // NOLINT(bugprone-exception-escape): nlohmann::json members, noexcept in fact
    bool ok = false;
    std::string type;
    nlohmann::json object;
    long code = 0;
    std::string resource_version;  // the object's metadata.resourceVersion, if a string
};
WatchEvent parse_event(std::string_view line);

class Watcher {
public:
    // `path`: e.g. /apis/kuadrant.io/v1alpha1/dnsrecords or .../namespaces/NS/dnsrecords.
    // `resync` > 0: list again that often (a watch is then opened for at most that long).
    Watcher(ApiAccess access, std::string path, std::string label_selector, std::function<void()> on_change,
            std::chrono::milliseconds resync = std::chrono::milliseconds(0));
    ~Watcher();
    Watcher(const Watcher&) = delete;
    Watcher& operator=(const Watcher&) = delete;

    void start();
    void stop();  // returns once the thread has ended (within about a second)
    [[nodiscard]] std::map<std::string, nlohmann::json> objects() const;
    [[nodiscard]] const WatchStats& stats() const { return stats_; }
    [[nodiscard]] std::string describe() const { return access_.server + path_; }
    // A JSON merge patch (RFC 7386) to `path` (e.g. a record's /status), synchronously. For a Watcher that
    // is not started, used by one thread; "" or what went wrong.
    std::string patch(const std::string& path, const std::string& body);

    // The result of one request, for the loop and for tests.
    enum class Result { ok, gone, unauthorized, failed, stopped };

private:
    void run();
    Result list();
    Result watch();
    Result request(const std::string& url, bool streaming, std::string* body, long* status,
                   const std::string* patch_body = nullptr);
    void handle_line(const std::string& line, Result& verdict);
    struct Body;
    static size_t on_body(char* data, size_t size, size_t n, void* user);
    std::string bearer();
    void wait(std::chrono::milliseconds d);

    ApiAccess access_;
    std::string path_, selector_;
    std::function<void()> on_change_;
    std::chrono::milliseconds resync_;
    std::chrono::steady_clock::time_point listed_at_{};
    WatchStats stats_;
    std::thread thread_;
    std::atomic<bool> stopping_{false};  // also read by libcurl's progress callback, without the lock
    Mutex wait_mu_;
    CondVar wait_cv_;

    mutable Mutex mu_;
    std::map<std::string, nlohmann::json> objects_ GLBD_GUARDED_BY(mu_);

    // The client thread's own.
    std::string resource_version_;
    std::string line_;  // the event being read
    std::string token_;
    int64_t token_read_ms_ = 0;
    std::string error_;
    friend struct WatcherTestAccess;
};

}  // namespace glbd::kube
