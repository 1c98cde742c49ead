// libFuzzer target: YAML text -> conf::load_text (never throws; errors are collected).
#include <cstdint>
#include <string>

#include "conf/config.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto r = glbd::conf::load_text(text, "fuzz.yaml");
    if (r.config.has_value() == !r.errors.empty()) __builtin_trap();  // exactly one of them
    for (const auto& e : r.errors) (void)e.str();
    return 0;
}
