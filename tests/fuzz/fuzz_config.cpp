// libFuzzer target: config text -> conf::load_text (never throws; errors are collected). Inputs that
// start with ';' are a zone file's contents instead, read through a config's `file:` (and, as they are,
// through its `records:`), so that the zone-file parser is fuzzed too.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "conf/config.hpp"
#include "scratch.hpp"

namespace {

void check(const std::string& yaml) {
    auto r = glbd::conf::load_text(yaml, "fuzz.yaml");
    if (r.config.has_value() == !r.errors.empty()) __builtin_trap();  // exactly one of them
    for (const auto& e : r.errors) (void)e.str();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    if (text.empty() || text[0] != ';') {
        check(text);
        return 0;
    }
    static const glbd::fuzz::Scratch scratch("/tmp/glbd-fuzz-" + std::to_string(getpid()) + ".zone");
    const std::string& zone = scratch.path();
    std::ofstream(zone, std::ios::binary | std::ios::trunc) << text;
    const std::string head =
        "cluster: {id: f}\nlisten: {dns: [\"127.0.0.1:53\"]}\nzones:\n  - origin: fuzz.test\n"
        "    nameservers: [{name: ns.fuzz.test, addresses: [192.0.2.53]}]\n";
    check(head + "    file: " + zone + "\n");
    std::string records = "    records: |\n";
    for (size_t p = 0; p <= text.size();) {
        size_t q = text.find('\n', p);
        if (q == std::string::npos) q = text.size();
        records += "      " + text.substr(p, q - p) + "\n";
        p = q + 1;
    }
    check(head + records);
    return 0;
}
