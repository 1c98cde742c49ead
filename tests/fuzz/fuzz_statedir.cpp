// libFuzzer target: a stateDir file (state.json) as found on disk -> read_state_file, which either throws
// (the file is then ignored whole) or returns origins that write back as a file that reads again. Read on one
// thread and on two (the later origins on their own, as a large file is): both throw, with the same error, or
// both give the same origins.
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "sync/state_file.hpp"

namespace {

// The origins as written, or the error: what a read of `text` gives.
std::string outcome(const std::string& text, size_t two_threads_from) {
    try {
        std::ostringstream out;
        glbd::sync::write_state_file(out, glbd::sync::read_state_file(text, two_threads_from), 1);
        return out.str();
    } catch (const std::exception& e) {
        return std::string("error: ") + e.what();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    if (outcome(text, 0) != outcome(text, SIZE_MAX)) __builtin_trap();  // two threads read as one
    std::istringstream in(text);
    std::vector<glbd::sync::InstanceState> states;
    try {
        states = glbd::sync::read_state_file(in);
    } catch (const std::exception&) {
        return 0;
    }
    std::ostringstream out;
    glbd::sync::write_state_file(out, states, 1);
    std::istringstream again(out.str());
    auto back = glbd::sync::read_state_file(again);  // must not throw: it is what glbd writes
    if (back.size() != states.size()) __builtin_trap();
    for (size_t i = 0; i < back.size(); ++i) {
        if (back[i].version != states[i].version || back[i].hosts.size() != states[i].hosts.size()) __builtin_trap();
    }
    return 0;
}
