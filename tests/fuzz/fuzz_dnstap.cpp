// libFuzzer target: one Frame Streams data frame as a dnstap reader (glbd explain --dnstap) gets it from a
// file -> decode(), and for a message it understands describe(), which parses the DNS message in it with
// ldns and escapes every text it prints.
#include <cstdint>
#include <string>

#include "server/dnstap/dnstap.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    glbd::dnstap::Decoded d;
    if (!glbd::dnstap::decode(data, size, d)) return 0;
    std::string line = glbd::dnstap::describe(d);
    for (char c : line) {
        if (static_cast<unsigned char>(c) < 0x20) __builtin_trap();  // one line, nothing a terminal obeys
    }
    return 0;
}
