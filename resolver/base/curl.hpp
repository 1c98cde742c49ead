// resolver/base/curl — libcurl's handles owned: an easy handle, a header list and a URL freed with their own
// functions when they go out of scope (health probes, the Kubernetes client, the admin clients).
#pragma once

#include <curl/curl.h>

#include <memory>
#include <string>

namespace glbd::curl {

struct EasyFree {
    void operator()(CURL* e) const { curl_easy_cleanup(e); }
};
struct SlistFree {
    void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
struct UrlFree {
    void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
using Easy = std::unique_ptr<CURL, EasyFree>;
using Slist = std::unique_ptr<curl_slist, SlistFree>;
using Url = std::unique_ptr<CURLU, UrlFree>;

inline Easy easy() { return Easy(curl_easy_init()); }

// An http(s) URL built part by part with libcurl's URL API: `host` and `port` are the URL's whatever
// `path_and_query` holds (it must start with "/" or "?"; what follows "?" is the query). Null when a part is
// refused.
inline Url url(bool https, const std::string& host, uint16_t port, const std::string& path_and_query) {
    if (path_and_query.empty() || (path_and_query[0] != '/' && path_and_query[0] != '?')) return nullptr;
    Url u(curl_url());
    if (!u) return nullptr;
    auto q = path_and_query.find('?');
    std::string path = path_and_query.substr(0, q);
    bool ok = curl_url_set(u.get(), CURLUPART_SCHEME, https ? "https" : "http", 0) == CURLUE_OK &&
              curl_url_set(u.get(), CURLUPART_HOST, host.c_str(), 0) == CURLUE_OK &&
              curl_url_set(u.get(), CURLUPART_PORT, std::to_string(port).c_str(), 0) == CURLUE_OK &&
              curl_url_set(u.get(), CURLUPART_PATH, path.empty() ? "/" : path.c_str(), 0) == CURLUE_OK &&
              (q == std::string::npos ||
               curl_url_set(u.get(), CURLUPART_QUERY, path_and_query.c_str() + q + 1, 0) == CURLUE_OK);
    return ok ? std::move(u) : nullptr;
}

// Appends `line` to the list (on an allocation failure the list stays as it was).
inline void append(Slist& list, const std::string& line) {
    if (curl_slist* l = curl_slist_append(list.get(), line.c_str())) {
        (void)list.release();  // `l` is the same list, grown
        list.reset(l);
    }
}

}  // namespace glbd::curl
