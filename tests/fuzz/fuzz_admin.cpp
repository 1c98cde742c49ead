// libFuzzer target: the admin endpoint's parsers. The bytes as an HTTP request (libhttp-parser with our
// limits), then the parsed request through the token check and, as a body, through the override parser;
// and the bytes as the JSON `glbd status` reads from /v1/state, which it renders or refuses, never crashes.
#include <cstdint>
#include <exception>
#include <string>

#include "server/app/admin.hpp"
#include "server/app/status.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string bytes(reinterpret_cast<const char*>(data), size);
    auto r = glbd::admin::parse_request(bytes);
    if (r.complete && r.error_status) __builtin_trap();
    if (r.request.body.size() > 64 * 1024) __builtin_trap();
    if (!glbd::admin::authorized(r.request, "")) __builtin_trap();  // no token: everyone
    bool with_token = glbd::admin::authorized(r.request, "s3cret");
    auto auth = r.request.headers.find("authorization");
    if (with_token != (auth != r.request.headers.end() && auth->second == "Bearer s3cret")) __builtin_trap();
    (void)glbd::admin::parse_override(r.request.body);
    (void)glbd::admin::parse_override(bytes);
    for (const char* key : {"name", "client", "subnet", "type"}) {
        (void)glbd::admin::query_param(r.request.query, key);
        (void)glbd::admin::query_param(bytes, key);
    }
    try {
        (void)glbd::render_status("127.0.0.1:9153", bytes);
    } catch (const std::exception&) {
    }
    try {
        (void)glbd::render_explain(bytes);
    } catch (const std::exception&) {
    }
    return 0;
}
