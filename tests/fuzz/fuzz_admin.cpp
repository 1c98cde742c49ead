// libFuzzer target: bytes on the admin port -> the HTTP request parser (libhttp-parser with our limits).
#include <cstdint>
#include <string>

#include "server/admin.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    auto r = glbd::admin::parse_request(std::string(reinterpret_cast<const char*>(data), size));
    if (r.complete && r.error_status) __builtin_trap();
    if (r.request.body.size() > 64 * 1024) __builtin_trap();
    return 0;
}
