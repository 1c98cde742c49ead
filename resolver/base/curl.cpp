// libcurl's functions that glbd calls, each defined here under its own name and forwarded to libcurl opened at
// the first call (SharedLibrary): a glbd that never probes over HTTP, watches Kubernetes or runs an admin
// client never loads libcurl and the 32 libraries it brings. The binary is not linked with -lcurl, so a call of
// a libcurl function not forwarded here fails to link: add it below. Without libcurl on the machine every
// function fails as libcurl's own do (a null handle, an error code), and nothing is called.
#define CURL_DISABLE_TYPECHECK  // the setopt/getinfo checking macros would hide the functions defined below
#include <curl/curl.h>

#include <cstdarg>
#include <type_traits>

#include "resolver/base/shared_library.hpp"

namespace {

glbd::SharedLibrary& libcurl() {
    static glbd::SharedLibrary lib("libcurl.so.4");
    return lib;
}

// libcurl's function of the same type as the forwarder `Own`, looked up once.
template <auto& Own>
auto real(const char* name) {
    using F = std::remove_reference_t<decltype(Own)>;
    static F* const f = libcurl().function<F>(name);
    return f;
}

}  // namespace

extern "C" {

CURLcode curl_global_init(long flags) {
    auto* f = real<curl_global_init>("curl_global_init");
    return f ? f(flags) : CURLE_FAILED_INIT;
}
const char* curl_easy_strerror(CURLcode code) {
    auto* f = real<curl_easy_strerror>("curl_easy_strerror");
    return f ? f(code) : libcurl().error().c_str();
}
void curl_free(void* p) {
    if (auto* f = real<curl_free>("curl_free"); f && p) f(p);
}

CURL* curl_easy_init() {
    auto* f = real<curl_easy_init>("curl_easy_init");
    return f ? f() : nullptr;
}
void curl_easy_cleanup(CURL* e) {
    if (auto* f = real<curl_easy_cleanup>("curl_easy_cleanup"); f && e) f(e);
}
void curl_easy_reset(CURL* e) {
    if (auto* f = real<curl_easy_reset>("curl_easy_reset"); f && e) f(e);
}
CURLcode curl_easy_perform(CURL* e) {
    auto* f = real<curl_easy_perform>("curl_easy_perform");
    return f ? f(e) : CURLE_FAILED_INIT;
}
char* curl_easy_escape(CURL* e, const char* s, int length) {
    auto* f = real<curl_easy_escape>("curl_easy_escape");
    return f ? f(e, s, length) : nullptr;
}

// The variadic three: the one argument after the option is read by the option's type, as libcurl reads it
// (lib/setopt.c; the option's number says its type: CURLOPTTYPE_*). va_start after an enum parameter: C++ calls
// it undefined (the enum is not the type it is promoted to), C does not (an enum is compatible with its integer
// type); these are libcurl's C declarations, which libcurl's own definitions read the same way.
#ifdef __clang__
#pragma clang diagnostic ignored "-Wvarargs"
#endif
CURLcode curl_easy_setopt(CURL* e, CURLoption option, ...) {
    auto* f = real<curl_easy_setopt>("curl_easy_setopt");
    if (!f) return CURLE_FAILED_INIT;
    va_list args;
    va_start(args, option);
    CURLcode rc = CURLE_OK;
    if (option < CURLOPTTYPE_OBJECTPOINT) {  // NOLINT(bugprone-branch-clone): each reads another type
        rc = f(e, option, va_arg(args, long));
    } else if (option < CURLOPTTYPE_FUNCTIONPOINT || option >= CURLOPTTYPE_BLOB) {
        rc = f(e, option, va_arg(args, void*));
    } else if (option < CURLOPTTYPE_OFF_T) {
        rc = f(e, option, va_arg(args, void (*)()));
    } else {
        rc = f(e, option, va_arg(args, curl_off_t));
    }
    va_end(args);
    return rc;
}
// Every CURLINFO_* takes a pointer to where the value goes.
CURLcode curl_easy_getinfo(CURL* e, CURLINFO info, ...) {
    auto* f = real<curl_easy_getinfo>("curl_easy_getinfo");
    if (!f) return CURLE_FAILED_INIT;
    va_list args;
    va_start(args, info);
    CURLcode rc = f(e, info, va_arg(args, void*));
    va_end(args);
    return rc;
}

CURLM* curl_multi_init() {
    auto* f = real<curl_multi_init>("curl_multi_init");
    return f ? f() : nullptr;
}
CURLMcode curl_multi_cleanup(CURLM* m) {
    auto* f = real<curl_multi_cleanup>("curl_multi_cleanup");
    return f ? f(m) : CURLM_BAD_HANDLE;
}
CURLMcode curl_multi_add_handle(CURLM* m, CURL* e) {
    auto* f = real<curl_multi_add_handle>("curl_multi_add_handle");
    return f ? f(m, e) : CURLM_BAD_HANDLE;
}
CURLMcode curl_multi_remove_handle(CURLM* m, CURL* e) {
    auto* f = real<curl_multi_remove_handle>("curl_multi_remove_handle");
    return f ? f(m, e) : CURLM_BAD_HANDLE;
}
CURLMcode curl_multi_assign(CURLM* m, curl_socket_t s, void* p) {
    auto* f = real<curl_multi_assign>("curl_multi_assign");
    return f ? f(m, s, p) : CURLM_BAD_HANDLE;
}
CURLMcode curl_multi_socket_action(CURLM* m, curl_socket_t s, int mask, int* running) {
    auto* f = real<curl_multi_socket_action>("curl_multi_socket_action");
    return f ? f(m, s, mask, running) : CURLM_BAD_HANDLE;
}
CURLMsg* curl_multi_info_read(CURLM* m, int* left) {
    auto* f = real<curl_multi_info_read>("curl_multi_info_read");
    return f ? f(m, left) : nullptr;
}
CURLMcode curl_multi_setopt(CURLM* m, CURLMoption option, ...) {
    auto* f = real<curl_multi_setopt>("curl_multi_setopt");
    if (!f) return CURLM_BAD_HANDLE;
    va_list args;
    va_start(args, option);
    CURLMcode rc = CURLM_OK;
    if (option < CURLOPTTYPE_OBJECTPOINT) {  // NOLINT(bugprone-branch-clone): each reads another type
        rc = f(m, option, va_arg(args, long));
    } else if (option < CURLOPTTYPE_FUNCTIONPOINT) {
        rc = f(m, option, va_arg(args, void*));
    } else if (option < CURLOPTTYPE_OFF_T) {
        rc = f(m, option, va_arg(args, void (*)()));
    } else {
        rc = f(m, option, va_arg(args, curl_off_t));
    }
    va_end(args);
    return rc;
}

curl_slist* curl_slist_append(curl_slist* list, const char* s) {
    auto* f = real<curl_slist_append>("curl_slist_append");
    return f ? f(list, s) : nullptr;
}
void curl_slist_free_all(curl_slist* list) {
    if (auto* f = real<curl_slist_free_all>("curl_slist_free_all"); f && list) f(list);
}

CURLU* curl_url() {
    auto* f = real<curl_url>("curl_url");
    return f ? f() : nullptr;
}
void curl_url_cleanup(CURLU* u) {
    if (auto* f = real<curl_url_cleanup>("curl_url_cleanup"); f && u) f(u);
}
CURLUcode curl_url_set(CURLU* u, CURLUPart part, const char* content, unsigned int flags) {
    auto* f = real<curl_url_set>("curl_url_set");
    return f ? f(u, part, content, flags) : CURLUE_BAD_HANDLE;
}
CURLUcode curl_url_get(CURLU* u, CURLUPart part, char** content, unsigned int flags) {
    auto* f = real<curl_url_get>("curl_url_get");
    return f ? f(u, part, content, flags) : CURLUE_BAD_HANDLE;
}

}  // extern "C"
