#include "sync/kube/client.hpp"

#include <curl/curl.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <stdexcept>

#include "conf/config.hpp"
#include "conf/document.hpp"
#include "resolver/base/address.hpp"
#include "resolver/base/clock.hpp"
#include "resolver/base/curl.hpp"
#include "resolver/base/log_throttle.hpp"
#include "resolver/base/read_file.hpp"
#include "resolver/base/thread_name.hpp"
#include "resolver/model/names.hpp"
#include "resolver/wire/text.hpp"
#include "sync/kube/records.hpp"

namespace glbd::kube {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

constexpr size_t kMaxErrorBody = 64u << 10;  // what is kept of an error's body (a Status object), for the log
constexpr size_t kMaxGetBody = 1u << 20;     // a Secret
constexpr int kPageSize = 250;               // objects a list page asks for
constexpr auto kBackoffFirst = 1000ms, kBackoffMax = 30'000ms;  // between failed requests, doubling
constexpr auto kHealthyFor = 60s;                               // a watch that lasted this long resets the backoff
constexpr auto kBusyWatch = 500ms;       // a watch the server ends sooner is waited after, as a failure
constexpr auto kTokenReread = 60'000ms;  // the token file is read again this often (tokens rotate)
constexpr long kConnectTimeoutMs = 10'000, kListTimeoutMs = 120'000;
constexpr long kSilentWatchS = 180;  // bookmarks or events come every minute or so: silence is a dead link
constexpr int kWatchTimeoutMinS = 300, kWatchTimeoutMaxS = 600;  // asked of the server, at random between
constexpr long kHttpOk = 200, kHttpUnauthorized = 401, kHttpGone = 410;

// A kubeconfig, a service account's token or namespace (a kubeconfig with its certificates inline is some KB).
std::string read_file(const std::string& path) {
    auto text = glbd::read_file(path, size_t{4} << 20);
    if (!text) throw std::runtime_error("cannot read " + path + ": " + text.error());
    return std::move(*text);
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

std::string str(const conf::Node& n, const char* key) { return std::string(n[key].scalar()); }

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
    if (!model::is_api_server_url(a.server)) {
        throw std::runtime_error("kubeconfig " + file + ": server " + printable(a.server) +
                                 " must be an https:// URL (http:// only to a loopback address)");
    }
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
    thread_ = std::thread([this] {
        name_this_thread("glbd-kube");
        run();
    });
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

Changes Watcher::take_changes() {
    MutexLock lock(mu_);
    return std::exchange(changes_, Changes{});
}

size_t Watcher::size() const {
    MutexLock lock(mu_);
    return objects_.size();
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

// Where a response's bytes go: a list or an event stream into its ObjectStream, anything else (a Status
// object of an error, a Secret) into `body`, bounded.
struct Watcher::Body {
    CURL* curl;
    ObjectStream* stream;
    std::string* body;
    size_t limit;
    bool too_big = false, bad = false;

    bool take(const char* data, size_t n) {
        long code = 0;
        curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
        if (stream && code == kHttpOk) {
            if (stream->feed({data, n})) return true;
            bad = true;
            return false;
        }
        if (body->size() + n > limit) {
            too_big = true;
            return false;
        }
        body->append(data, n);
        return true;
    }
};

size_t Watcher::on_body(char* data, size_t size, size_t n, void* user) {
    return static_cast<Body*>(user)->take(data, size * n) ? size * n : 0;  // 0 aborts the transfer
}

Watcher::Outcome Watcher::request(const std::string& url, ObjectStream* stream, std::string* body, long* status,
                                  const std::string* patch_body) {
    bool watching = stream && stream->shape() == ObjectStream::Shape::events;
    verdict_ = Outcome::ok;
    curl::Easy easy = curl::easy();
    CURL* c = easy.get();
    if (!c) return Outcome::failed;
    curl::Slist headers;
    curl::append(headers, "Accept: application/json");
    if (patch_body) {
        curl::append(headers, "Content-Type: application/merge-patch+json");
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, "PATCH");
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, patch_body->c_str());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(patch_body->size()));
    }
    if (std::string t = bearer(); !t.empty()) curl::append(headers, "Authorization: Bearer " + t);
    Body sink{c, stream, body, stream ? kMaxErrorBody : kMaxGetBody};
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PROXY, "");  // never through a proxy from the environment (*_proxy)
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, kConnectTimeoutMs);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, &stopping_);
    if (watching) {
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, kSilentWatchS);
    } else {
        curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, kListTimeoutMs);
    }
    TlsBlobs blobs;
    apply_tls(c, access_, blobs);
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
    if (stopping_) return Outcome::stopped;
    if (watching && verdict_ == Outcome::gone) return Outcome::gone;
    if (*status == kHttpGone) return Outcome::gone;
    if (*status == kHttpUnauthorized) {
        error_ = "401 Unauthorized";
        return Outcome::unauthorized;
    }
    if (sink.too_big) {
        error_ = "response over the size limit";
        return Outcome::failed;
    }
    if (sink.bad) {
        error_ = "malformed response: " + stream->error();
        return Outcome::failed;
    }
    if (watching && verdict_ == Outcome::failed) return Outcome::failed;
    if (rc != CURLE_OK) {
        error_ = curl_easy_strerror(rc);
        return Outcome::failed;
    }
    if (*status != kHttpOk) {
        error_ = "HTTP " + std::to_string(*status);
        return Outcome::failed;
    }
    return Outcome::ok;
}

Status Watcher::patch(const std::string& path, const std::string& body) {
    std::string reply;
    long status = 0;
    Outcome r = request(access_.server + path, nullptr, &reply, &status, &body);
    if (r == Outcome::unauthorized) {
        token_.clear();
        reply.clear();
        r = request(access_.server + path, nullptr, &reply, &status, &body);
    }
    if (r != Outcome::ok) return Err{error_};
    return ok();
}

glbd::Result<std::string> Watcher::get(const std::string& path) {
    long status = 0;
    std::string body;
    Outcome r = request(access_.server + path, nullptr, &body, &status);
    if (r == Outcome::unauthorized) {
        token_.clear();
        body.clear();
        r = request(access_.server + path, nullptr, &body, &status);
    }
    if (r != Outcome::ok) return Err{error_};
    return body;
}

namespace {

std::string with_selector(std::string url, const std::string& selector, char sep) {
    if (selector.empty()) return url;
    char* esc = curl_easy_escape(nullptr, selector.c_str(), static_cast<int>(selector.size()));
    url += sep + std::string("labelSelector=") + esc;
    curl_free(esc);
    return url;
}

// A small JSON object's string field ("" when absent or of another type).
std::string field(const json& j, const char* key) {
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

namespace {

// A record from a streamed object: whole, or its name (and version) alone when it was too large to keep.
Record read_object(ObjectStream::Object&& o) {
    if (o.whole) return read_record_text(o.text);
    json md = json::parse(o.metadata, nullptr, false);
    return read_record(json{{"metadata", md.is_object() ? md : json::object()}}, o.bytes);
}

}  // namespace

RecordPtr Watcher::admit(Record&& r, size_t& held) {
    if (r.name.empty()) {
        stats_.bad_events.fetch_add(1);
        return nullptr;
    }
    if (r.error.empty() && held + r.bytes > RecordLimits::kMaxHeldBytes) {
        r.endpoints.clear(), r.health.reset(), r.status.reset();
        r.error = "the records held pass " + std::to_string(RecordLimits::kMaxHeldBytes >> 20) + " MiB";
    }
    if (r.bytes > RecordLimits::kMaxObjectBytes || !r.error.empty()) stats_.over_limit.fetch_add(1);
    if (r.error.empty()) held += r.bytes;
    return std::make_shared<const Record>(std::move(r));
}

Watcher::Outcome Watcher::list_page(const std::string& cont, std::map<std::string, RecordPtr>& fresh, size_t& bytes,
                                    std::string& next) {
    std::string url = access_.server + path_ + "?limit=" + std::to_string(kPageSize);
    if (!cont.empty()) {
        char* esc = curl_easy_escape(nullptr, cont.c_str(), static_cast<int>(cont.size()));
        url += std::string("&continue=") + esc;
        curl_free(esc);
    }
    url = with_selector(url, selector_, '&');
    bool done = false;
    std::string version;
    next.clear();
    ObjectStream stream(
        ObjectStream::Shape::list, RecordLimits::kMaxObjectBytes,
        [&](ObjectStream::Object&& o) {
            if (fresh.size() >= RecordLimits::kMaxObjects) {
                stats_.over_limit.fetch_add(1);
            } else if (RecordPtr r = admit(read_object(std::move(o)), bytes)) {
                fresh[r->key()] = std::move(r);
            }
        },
        [&](ObjectStream::Done&& d) {
            done = true;
            json md = json::parse(d.metadata, nullptr, false);
            if (md.is_object()) version = field(md, "resourceVersion"), next = field(md, "continue");
        });
    std::string body;
    long status = 0;
    Outcome r = request(url, &stream, &body, &status);
    if (r == Outcome::failed && status != kHttpOk && !body.empty()) error_ += ": " + printable(body.substr(0, 200));
    if (r != Outcome::ok) return r;
    if (!done) {
        error_ = "the list ended early";
        return Outcome::failed;
    }
    if (next.empty()) resource_version_ = version;  // the list's version is the last page's
    return Outcome::ok;
}

Watcher::Outcome Watcher::list() {
    std::map<std::string, RecordPtr> fresh;
    size_t bytes = 0;
    std::string cont, next;
    do {
        Outcome r = list_page(cont, fresh, bytes, next);
        if (r != Outcome::ok) return r;  // a continue token that expired is 410: the list starts again
        cont = next;
    } while (!cont.empty());
    {
        MutexLock lock(mu_);
        changes_ = Changes{true, fresh};
        objects_ = std::move(fresh);
        bytes_ = bytes;
    }
    stats_.relists.fetch_add(1);
    listed_at_ = std::chrono::steady_clock::now();
    stats_.last_event_ms = wall_ms();
    stats_.synced = true;
    if (on_change_) on_change_();
    return Outcome::ok;
}

Watcher::Outcome Watcher::watch() {
    static thread_local std::mt19937 rng{std::random_device{}()};
    int timeout_s = std::uniform_int_distribution<int>(kWatchTimeoutMinS, kWatchTimeoutMaxS)(rng);
    if (resync_.count() > 0) timeout_s = std::max(1, std::min(timeout_s, static_cast<int>(resync_.count() / 1000)));
    std::string url =
        access_.server + path_ + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(timeout_s);
    if (!resource_version_.empty()) url += "&resourceVersion=" + resource_version_;
    url = with_selector(url, selector_, '&');
    event_object_.reset();
    ObjectStream stream(
        ObjectStream::Shape::events, RecordLimits::kMaxObjectBytes,
        [&](ObjectStream::Object&& o) { event_object_ = std::move(o); },
        [&](ObjectStream::Done&& d) { handle_event(std::move(d), verdict_); });
    std::string body;
    long status = 0;
    Outcome r = request(url, &stream, &body, &status);
    stats_.bad_events.fetch_add(stream.bad_lines());
    if (r == Outcome::failed && status != kHttpOk && !body.empty()) error_ += ": " + printable(body.substr(0, 200));
    return r;
}

void Watcher::handle_event(ObjectStream::Done&& done, Outcome& verdict) {
    std::optional<ObjectStream::Object> o = std::exchange(event_object_, std::nullopt);
    if (verdict != Outcome::ok) return;  // the stream is being given up
    if (!o) {
        stats_.bad_events.fetch_add(1);
        return;
    }
    if (done.type == "ERROR") {
        json status = o->whole ? json::parse(o->text, nullptr, false) : json();
        auto code = status.is_object() ? status.find("code") : status.end();
        long c = status.is_object() && code != status.end() && code->is_number_integer() ? code->get<long>() : 0;
        verdict = c == kHttpGone ? Outcome::gone : Outcome::failed;
        error_ = "watch ERROR " + std::to_string(c);
        return;
    }
    if (done.type != "ADDED" && done.type != "MODIFIED" && done.type != "DELETED" && done.type != "BOOKMARK") {
        stats_.bad_events.fetch_add(1);
        return;
    }
    bool deleted = done.type == "DELETED", bookmark = done.type == "BOOKMARK";
    if (deleted || bookmark) o->whole = false, o->bytes = 0;  // only the name and version matter
    Record r = read_object(std::move(*o));
    if (!r.resource_version.empty()) resource_version_ = r.resource_version;
    if (bookmark) return;
    {
        MutexLock lock(mu_);
        std::string key = r.key();
        auto it = objects_.find(key);
        if (it != objects_.end() && it->second->error.empty()) bytes_ -= std::min(bytes_, it->second->bytes);
        if (deleted) {
            if (it != objects_.end()) objects_.erase(it);
            changes_.records[key] = nullptr;
            if (changes_.full) changes_.records.erase(key);
        } else if (it == objects_.end() && objects_.size() >= RecordLimits::kMaxObjects) {
            stats_.over_limit.fetch_add(1);
        } else if (RecordPtr p = admit(std::move(r), bytes_)) {
            objects_[key] = p;
            changes_.records[key] = std::move(p);
        }
    }
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
        Outcome r;
        try {
            r = need_list ? list() : watch();
        } catch (const std::exception& e) {
            error_ = e.what();
            r = Outcome::failed;
        }
        if (r == Outcome::stopped) break;
        if (r == Outcome::ok) {
            bool was_list = need_list;
            if (was_list) spdlog::info("kubernetes: listed {} ({} object(s))", describe(), size());
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
        if (r == Outcome::gone) {
            spdlog::info("kubernetes: {}: resourceVersion {} expired (410): listing again", describe(),
                         resource_version_);
            need_list = true;
            continue;
        }
        stats_.errors.fetch_add(1);
        if (r == Outcome::unauthorized) token_.clear();  // read the token file again: it may have rotated
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
