// libFuzzer target: a stateDir file (state.json) as found on disk -> read_state_file, which either throws
// (the file is then ignored whole) or returns origins that write back as a file that reads again.
#include <cstdint>
#include <exception>
#include <sstream>
#include <string>
#include <vector>

#include "sync/state_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
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
