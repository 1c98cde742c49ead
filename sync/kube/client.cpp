#include "sync/kube/client.hpp"

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "conf/config.hpp"
#include "conf/document.hpp"
#include "resolver/base/address.hpp"
#include "resolver/base/clock.hpp"
#include "resolver/base/curl.hpp"
#include "resolver/base/log_throttle.hpp"
#include "resolver/wire/text.hpp"
#include "sync/kube/records.hpp"

namespace glbd::kube {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr size_t kMaxEventBytes = 32u << 20;  // one watch event (a DNSRecord is a few KiB)
constexpr size_t kMaxListBytes = 512u << 20;  // one list
constexpr size_t kMaxErrorBody = 64u << 10;   // what is kept of an error's body (a Status object), for the log
constexpr auto kBackoffFirst = 1000ms, kBackoffMax = 30'000ms;  // between failed requests, doubling
constexpr auto kHealthyFor = 60s;                               // a watch that lasted this long resets the backoff
constexpr auto kBusyWatch = 500ms;       // a watch the server ends sooner is waited after, as a failure
constexpr auto kTokenReread = 60'000ms;  // the token file is read again this often (tokens rotate)
constexpr long kConnectTimeoutMs = 10'000, kListTimeoutMs = 120'000;
constexpr long kSilentWatchS = 180;  // bookmarks or events come every minute or so: silence is a dead link
constexpr int kWatchTimeoutMinS = 300, kWatchTimeoutMaxS = 600;  // asked of the server, at random between
constexpr long kHttpOk = 200, kHttpUnauthorized = 401, kHttpGone = 410;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::string trim(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) s.pop_back();
    return s;
}

// A kubeconfig's path fields are relative to the file's directory.
std::string relative_to(const std::string& file, const std::string& path) {
    if (path.empty() || path[0] == '/') return path;
    auto slash = file.rfind('/');
    return slash == std::string::npos ? path : file.substr(0, slash + 1) + path;
}

// The `what` of the item of `list` whose name is `name` (a kubeconfig's clusters, users and contexts).
conf::Node named(const conf::Node& list, const std::string& name, const char* what) {
    for (size_t i = 0; i < list.size() && list.is_sequence(); ++i) {
        if (list[i]["name"].is_scalar() && list[i]["name"].scalar() == name) return list[i][what];
    }
    return {};
}

std::string str(const conf::Node& n, const char* key) { return n[key].scalar(); }

std::string decode64(const std::string& text, const char* what) {
    auto d = wire::base64_decode(text);
    if (!d) throw std::runtime_error(std::string(what) + " is not base64");
    return *d;
}

ApiAccess from_kubeconfig(const std::string& file) {
    std::unique_ptr<conf::Document> doc;
    try {
        doc = std::make_unique<conf::Document>(read_file(file));
    } catch (const std::exception& e) {
        throw std::runtime_error("kubeconfig " + file + ": " + e.what());
    }
    conf::Node root = doc->root();
    std::string ctx_name = str(root, "current-context");
    if (ctx_name.empty()) throw std::runtime_error("kubeconfig " + file + ": no current-context");
    conf::Node ctx = named(root["contexts"], ctx_name, "context");
    if (!ctx) throw std::runtime_error("kubeconfig " + file + ": no context " + ctx_name);
    conf::Node cluster = named(root["clusters"], str(ctx, "cluster"), "cluster");
    conf::Node user = named(root["users"], str(ctx, "user"), "user");
    if (!cluster) throw std::runtime_error("kubeconfig " + file + ": no cluster " + str(ctx, "cluster"));
    ApiAccess a;
    a.server = str(cluster, "server");
    a.ca_file = relative_to(file, str(cluster, "certificate-authority"));
    if (auto d = str(cluster, "certificate-authority-data"); !d.empty())
        a.ca_data = decode64(d, "certificate-authority-data");
    a.namespace_ = str(ctx, "namespace");
    if (user) {
        a.token = str(user, "token");
        a.token_file = relative_to(file, str(user, "tokenFile"));
        a.cert_file = relative_to(file, str(user, "client-certificate"));
        a.key_file = relative_to(file, str(user, "client-key"));
        if (auto d = str(user, "client-certificate-data"); !d.empty())
            a.cert_data = decode64(d, "client-certificate-data");
        if (auto d = str(user, "client-key-data"); !d.empty()) a.key_data = decode64(d, "client-key-data");
    }
    if (a.server.empty()) throw std::runtime_error("kubeconfig " + file + ": cluster has no server");
    return a;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
    return static_cast<std::atomic<bool>*>(user)->load() ? 1 : 0;
}

}  // namespace

ApiAccess ApiAccess::from(const conf::Kubernetes& k, const std::string& sa_dir) {
    if (!k.kubeconfig.empty()) return from_kubeconfig(k.kubeconfig);
    ApiAccess a;
    auto exists = [](const std::string& p) { return std::ifstream(p).good(); };
    if (exists(sa_dir + "/token")) a.token_file = sa_dir + "/token";
    if (exists(sa_dir + "/ca.crt")) a.ca_file = sa_dir + "/ca.crt";
    if (exists(sa_dir + "/namespace")) a.namespace_ = trim(read_file(sa_dir + "/namespace"));
    if (!k.api_server.empty()) {
        a.server = k.api_server;
        return a;
    }
    const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
    const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
    if (!host || !*host)
        throw std::runtime_error(
            "not in a cluster (KUBERNETES_SERVICE_HOST unset): set kubernetes.apiServer or kubeconfig");
    std::string h = host;
    if (h.find(':') != std::string::npos) h = "[" + h + "]";  // IPv6
    a.server = "https://" + h + ":" + (port && *port ? port : "443");
    if (a.token_file.empty()) throw std::runtime_error("in cluster, but no service account token in " + sa_dir);
    return a;
}

Watcher::Watcher(ApiAccess access, std::string path, std::string label_selector, std::function<void()> on_change,
                 std::chrono::milliseconds resync)
    : access_(std::move(access)),
      path_(std::move(path)),
      selector_(std::move(label_selector)),
      on_change_(std::move(on_change)),
      resync_(resync) {}

Watcher::~Watcher() { stop(); }

void Watcher::start() {
    stopping_ = false;
    thread_ = std::thread([this] { run(); });
}

void Watcher::stop() {
    if (!thread_.joinable()) return;
    {
        MutexLock lock(wait_mu_);
        stopping_ = true;
    }
    wait_cv_.notify_all();
    thread_.join();
}

std::map<std::string, json> Watcher::objects() const {
    MutexLock lock(mu_);
    return objects_;
}

void Watcher::wait(std::chrono::milliseconds d) {
    auto deadline = std::chrono::steady_clock::now() + d;
    MutexLock lock(wait_mu_);
    while (!stopping_ && wait_cv_.wait_until(wait_mu_, deadline)) {
    }
}

std::string Watcher::bearer() {
    if (!access_.token_file.empty() &&
        (token_.empty() || static_cast<int64_t>(wall_ms()) - token_read_ms_ > kTokenReread.count())) {
        try {
            token_ = trim(read_file(access_.token_file));
        } catch (const std::exception& e) {
            spdlog::warn("kubernetes: {}", e.what());
        }
        token_read_ms_ = static_cast<int64_t>(wall_ms());
    }
    return access_.token_file.empty() ? access_.token : token_;
}

namespace {

// The API server's CA and a client certificate, from files or from a kubeconfig's data (the blobs are not
// copied by curl, so they live in the caller's frame until the transfer ends).
struct TlsBlobs {
    curl_blob ca{}, cert{}, key{};
};

// One PEM item: in memory (a kubeconfig's *-data, as a blob) or in a file; neither: left unset.
void pem(CURL* c, const std::string& data, const std::string& file, curl_blob& blob, CURLoption blob_opt,
         CURLoption file_opt, CURLoption type_opt) {
    if (!data.empty()) {
        blob = curl_blob{const_cast<char*>(data.data()), data.size(), CURL_BLOB_NOCOPY};
        curl_easy_setopt(c, blob_opt, &blob);
        if (type_opt != CURLOPT_LASTENTRY) curl_easy_setopt(c, type_opt, "PEM");
    } else if (!file.empty()) {
        curl_easy_setopt(c, file_opt, file.c_str());
    }
}

void apply_tls(CURL* c, const ApiAccess& access, TlsBlobs& b) {
    pem(c, access.ca_data, access.ca_file, b.ca, CURLOPT_CAINFO_BLOB, CURLOPT_CAINFO, CURLOPT_LASTENTRY);
    pem(c, access.cert_data, access.cert_file, b.cert, CURLOPT_SSLCERT_BLOB, CURLOPT_SSLCERT, CURLOPT_SSLCERTTYPE);
    pem(c, access.key_data, access.key_file, b.key, CURLOPT_SSLKEY_BLOB, CURLOPT_SSLKEY, CURLOPT_SSLKEYTYPE);
}

}  // namespace

// Where a response's bytes go: a list into `body` (bounded), a watch's event stream line by line into
// handle_line(), an error's body (a Status object) into `body` for the log.
struct Watcher::Body {
    Watcher* watcher;
    CURL* curl;
    bool streaming;
    std::string* body;
    Result* verdict;
    size_t total = 0;
    bool too_big = false;

    bool take(const char* data, size_t n) {
        total += n;
        if (!streaming) {
            if (total > kMaxListBytes) {
                too_big = true;
                return false;
            }
            body->append(data, n);
            return true;
        }
        long code = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        if (code != kHttpOk) {
            if (body->size() < kMaxErrorBody) body->append(data, std::min(n, kMaxErrorBody));
            return true;
        }
        std::string& line = watcher->line_;
        for (size_t i = 0; i < n; ++i) {
            if (data[i] != '\n') {
                line.push_back(data[i]);
                if (line.size() > kMaxEventBytes) {
                    too_big = true;
                    return false;
                }
                continue;
            }
            watcher->handle_line(line, *verdict);
            line.clear();
            if (*verdict == Result::gone || *verdict == Result::failed) return false;
        }
        return true;
    }
};

size_t Watcher::on_body(char* data, size_t size, size_t n, void* user) {
    return static_cast<Body*>(user)->take(data, size * n) ? size * n : 0;  // 0 aborts the transfer
}

Watcher::Result Watcher::request(const std::string& url, bool streaming, std::string* body, long* status,
                                 const std::string* patch_body) {
    curl::Easy easy = curl::easy();
    CURL* c = easy.get();
    if (!c) return Result::failed;
    curl::Slist headers;
    curl::append(headers, "Accept: application/json");
    if (patch_body) {
        curl::append(headers, "Content-Type: application/merge-patch+json");
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PATCH");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, patch_body->c_str());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(patch_body->size()));
    }
    if (std::string t = bearer(); !t.empty()) curl::append(headers, "Authorization: Bearer " + t);
    Result verdict = Result::ok;
    Body sink{this, c, streaming, body, &verdict};
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &stopping_);
    if (streaming) {
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, kSilentWatchS);
    } else {
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, kListTimeoutMs);
    }
    TlsBlobs blobs;
    apply_tls(c, access_, blobs);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    if (stopping_) return Result::stopped;
    if (verdict == Result::gone) return Result::gone;
    if (*status == kHttpGone) return Result::gone;
    if (*status == kHttpUnauthorized) {
        error_ = "401 Unauthorized";
        return Result::unauthorized;
    }
    if (sink.too_big) {
        error_ = "response over the size limit";
        return Result::failed;
    }
    if (verdict == Result::failed) return Result::failed;
    if (rc != CURLE_OK) {
        error_ = curl_easy_strerror(rc);
        return Result::failed;
    }
    if (*status != kHttpOk) {
        error_ = "HTTP " + std::to_string(*status);
        return Result::failed;
    }
    return Result::ok;
}

std::string Watcher::patch(const std::string& path, const std::string& body) {
    std::string reply;
    long status = 0;
    Result r = request(access_.server + path, false, &reply, &status, &body);
    if (r == Result::unauthorized) {
        token_.clear();
        reply.clear();
        r = request(access_.server + path, false, &reply, &status, &body);
    }
    return r == Result::ok ? "" : error_;
}

Watcher::Result Watcher::list() {
    std::string url = access_.server + path_;
    if (!selector_.empty()) {
        char* esc = curl_easy_escape(nullptr, selector_.c_str(), static_cast<int>(selector_.size()));
        url += std::string("?labelSelector=") + esc;
        curl_free(esc);
    }
    std::string body;
    long status = 0;
    Result r = request(url, false, &body, &status);
    if (r != Result::ok) return r;
    json list = json::parse(body, nullptr, false);
    if (list.is_discarded() || !list.is_object() || !list.contains("items") || !list["items"].is_array()) {
        error_ = "the list is not a JSON list object";
        return Result::failed;
    }
    std::map<std::string, json> fresh;
    for (auto& item : list["items"]) {
        if (std::string k = key_of(item); !k.empty()) fresh[k] = std::move(item);
    }
    resource_version_.clear();
    if (auto m = list.find("metadata");
        m != list.end() && m->is_object() && m->contains("resourceVersion") && (*m)["resourceVersion"].is_string()) {
        resource_version_ = (*m)["resourceVersion"].get<std::string>();
    }
    {
        MutexLock lock(mu_);
        objects_ = std::move(fresh);
    }
    stats_.relists.fetch_add(1);
    listed_at_ = std::chrono::steady_clock::now();
    stats_.last_event_ms = wall_ms();
    stats_.synced = true;
    if (on_change_) on_change_();
    return Result::ok;
}

Watcher::Result Watcher::watch() {
    static thread_local std::mt19937 rng{std::random_device{}()};
    int timeout_s = std::uniform_int_distribution<int>(kWatchTimeoutMinS, kWatchTimeoutMaxS)(rng);
    if (resync_.count() > 0) timeout_s = std::max(1, std::min(timeout_s, static_cast<int>(resync_.count() / 1000)));
    std::string url =
        access_.server + path_ + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout_s);
    if (!resource_version_.empty()) url += "&resourceVersion=" + resource_version_;
    if (!selector_.empty()) {
        char* esc = curl_easy_escape(nullptr, selector_.c_str(), static_cast<int>(selector_.size()));
        url += std::string("&labelSelector=") + esc;
        curl_free(esc);
    }
    line_.clear();
    std::string body;
    long status = 0;
    Result r = request(url, true, &body, &status);
    if (r == Result::failed && status != kHttpOk && !body.empty()) error_ += ": " + printable(body.substr(0, 200));
    return r;
}

WatchEvent parse_event(std::string_view line) {
    WatchEvent ev;
    json j = json::parse(line.begin(), line.end(), nullptr, false);
    if (!j.is_object()) return ev;
    auto type = j.find("type");
    auto obj = j.find("object");
    if (type == j.end() || !type->is_string() || obj == j.end() || !obj->is_object()) return ev;
    ev.ok = true;
    ev.type = type->get<std::string>();
    if (auto code = obj->find("code"); code != obj->end() && code->is_number_integer()) ev.code = code->get<long>();
    if (auto m = obj->find("metadata"); m != obj->end() && m->is_object()) {
        if (auto rv = m->find("resourceVersion"); rv != m->end() && rv->is_string())
            ev.resource_version = rv->get<std::string>();
    }
    ev.object = std::move(*obj);
    return ev;
}

void Watcher::handle_line(const std::string& line, Result& verdict) {
    if (line.empty() || line == "\r") return;
    WatchEvent ev = parse_event(line);
    if (!ev.ok) {
        stats_.bad_events.fetch_add(1);
        return;
    }
    if (ev.type == "ERROR") {
        verdict = ev.code == kHttpGone ? Result::gone : Result::failed;
        error_ = "watch ERROR " + std::to_string(ev.code);
        return;
    }
    if (ev.type == "BOOKMARK") {
        if (!ev.resource_version.empty()) resource_version_ = ev.resource_version;
        return;
    }
    std::string key = key_of(ev.object);
    if (key.empty() || (ev.type != "ADDED" && ev.type != "MODIFIED" && ev.type != "DELETED")) {
        stats_.bad_events.fetch_add(1);
        return;
    }
    {
        MutexLock lock(mu_);
        if (ev.type == "DELETED")
            objects_.erase(key);
        else
            objects_[key] = std::move(ev.object);
    }
    if (!ev.resource_version.empty()) resource_version_ = ev.resource_version;
    stats_.events.fetch_add(1);
    stats_.last_event_ms = wall_ms();
    if (on_change_) on_change_();
}

void Watcher::run() {
    auto backoff = kBackoffFirst;
    bool need_list = true;
    std::string last_logged;
    while (!stopping_) {
        auto began = std::chrono::steady_clock::now();
        Result r;
        try {
            r = need_list ? list() : watch();
        } catch (const std::exception& e) {
            error_ = e.what();
            r = Result::failed;
        }
        if (r == Result::stopped) break;
        if (r == Result::ok) {
            bool was_list = need_list;
            if (was_list) spdlog::info("kubernetes: listed {} ({} object(s))", describe(), objects().size());
            need_list = resync_.count() > 0 && std::chrono::steady_clock::now() - listed_at_ >= resync_;
            last_logged.clear();
            auto lasted = std::chrono::steady_clock::now() - began;
            if (lasted > kHealthyFor) backoff = kBackoffFirst;
            if (!was_list && lasted < kBusyWatch) {
                // A watch the server ends at once, again and again, must not become a busy loop.
                wait(backoff);
                backoff = std::min(backoff * 2, kBackoffMax);
            }
            continue;  // a watch that ended normally is opened again from where it was
        }
        if (r == Result::gone) {
            spdlog::info("kubernetes: {}: resourceVersion {} expired (410): listing again", describe(),
                         resource_version_);
            need_list = true;
            continue;
        }
        stats_.errors.fetch_add(1);
        if (r == Result::unauthorized) token_.clear();  // read the token file again: it may have rotated
        if (error_ != last_logged) {
            spdlog::warn("kubernetes: {}: {}; retrying in {} ms (what is known stays served)", describe(), error_,
                         backoff.count());
            last_logged = error_;
        }
        wait(backoff);
        backoff = std::min(backoff * 2, kBackoffMax);
    }
}

}  // namespace glbd::kube
