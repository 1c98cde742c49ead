// resolver/base/curl — libcurl's handles owned: an easy handle and a header list freed with their own
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
using Easy = std::unique_ptr<CURL, EasyFree>;
using Slist = std::unique_ptr<curl_slist, SlistFree>;

inline Easy easy() { return Easy(curl_easy_init()); }

// Appends `line` to the list (on an allocation failure the list stays as it was).
inline void append(Slist& list, const std::string& line) {
    if (curl_slist* l = curl_slist_append(list.get(), line.c_str())) {
        (void)list.release();  // `l` is the same list, grown
        list.reset(l);
    }
}

}  // namespace glbd::curl
