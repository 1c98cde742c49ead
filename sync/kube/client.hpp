// sync/kube/client — a Kubernetes list-and-watch client for one resource path, on its own thread, with libcurl.
// List in pages (limit/continue), then watch from the list's resourceVersion with bookmarks; responses are
// read as they arrive, one object at a time (sync/kube/stream), and each object is kept as a Record (only the
// fields glbd uses; the JSON is dropped at once). Bounded: an object over RecordLimits::kMaxObjectBytes keeps
// its name only, and so does one past kMaxHeldBytes of records held; past kMaxObjects none is kept. 410 Gone
// (as HTTP status or as an ERROR event) relists; errors reconnect with backoff (1 s doubling to 30 s, back to
// 1 s after a minute of health); each watch asks for a random timeout of 5-10 minutes. The bearer token file
// is re-read every minute and on 401. The control thread takes what changed with take_changes(); `on_change`
// runs on the client's thread after each change and must only wake the control thread. Never throws out of
// its thread; a malformed event is counted and skipped.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "conf/config.hpp"
#include "resolver/base/mutex.hpp"
#include "resolver/base/result.hpp"
#include "sync/kube/records.hpp"
#include "sync/kube/stream.hpp"

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
    std::atomic<uint64_t> over_limit{0};     // objects kept as names only (or not at all) by the limits
    std::atomic<uint64_t> last_event_ms{0};  // wall clock of the last event or list
    std::atomic<bool> synced{false};         // a list has completed; the watch is open or reopening
};

// What changed since the last take_changes(): the records by "namespace/name", null for one deleted; `full`:
// a list replaced everything, and `records` is all there is.
struct Changes {
    bool full = false;
    std::map<std::string, RecordPtr> records;
};

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
    // The records changed since the last call (the first call after a list: all of them). Any thread.
    Changes take_changes();
    [[nodiscard]] size_t size() const;
    [[nodiscard]] const WatchStats& stats() const { return stats_; }
    [[nodiscard]] std::string describe() const { return access_.server + path_; }
    // A JSON merge patch (RFC 7386) to `path` (e.g. a record's /status), synchronously. For a Watcher that
    // is not started, used by one thread; why not, when it failed.
    Status patch(const std::string& path, const std::string& body);
    // A GET of `path` (a Secret), synchronously, the same way: its body (at most 1 MiB), or why not.
    glbd::Result<std::string> get(const std::string& path);

    // The result of one request, for the loop and for tests.
    enum class Outcome { ok, gone, unauthorized, failed, stopped };

private:
    void run();
    Outcome list();
    Outcome watch();
    Outcome list_page(const std::string& cont, std::map<std::string, RecordPtr>& fresh, size_t& bytes,
                      std::string& next);
    Outcome request(const std::string& url, ObjectStream* stream, std::string* body, long* status,
                    const std::string* patch_body = nullptr);
    void handle_event(ObjectStream::Done&& done, Outcome& verdict);
    // A record as held: whole while `held` (JSON bytes of whole records) stays within kMaxHeldBytes, else its
    // name only; null without a name.
    RecordPtr admit(Record&& r, size_t& held);
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
    std::map<std::string, RecordPtr> objects_ GLBD_GUARDED_BY(mu_);
    size_t bytes_ GLBD_GUARDED_BY(mu_) = 0;  // JSON bytes of the whole records held
    Changes changes_ GLBD_GUARDED_BY(mu_);

    // The client thread's own.
    std::string resource_version_;
    std::optional<ObjectStream::Object> event_object_;  // the object of the event being read
    Outcome verdict_ = Outcome::ok;                     // what the events of the open watch decided
    std::string token_;
    int64_t token_read_ms_ = 0;
    std::string error_;
    friend struct WatcherTestAccess;
};

}  // namespace glbd::kube
