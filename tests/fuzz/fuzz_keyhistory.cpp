// libFuzzer target: stateDir's DNSSEC key history (dnssec::KeyHistory::from_text). A file that reads must
// write back as text that reads again to the same history; a refused one names why and changes nothing.
#include <cstdint>
#include <string>
#include <string_view>

#include "resolver/dnssec/rollover.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    glbd::dnssec::KeyHistory h;
    std::string error;
    if (!h.from_text(in, error)) {
        if (error.empty() || !h.to_text().ends_with(" 2\n")) __builtin_trap();  // unchanged: the header alone
        return 0;
    }
    const std::string text = h.to_text();
    glbd::dnssec::KeyHistory again;
    if (!again.from_text(text, error) || again.to_text() != text) __builtin_trap();
    return 0;
}
