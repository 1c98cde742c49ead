// sync/state_file — the stateDir file (state.json) as text: {"saved": ms, "origins": [one InstanceState
// each]}. Pure functions, no files opened here (sync/peers.* decides where and when).
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <string>
#include <vector>

#include "sync/state.hpp"

namespace glbd::sync {

// One origin as a JSON object. Never throws: a byte that is not printable ASCII (a peer's report is data, not
// text we vouch for; the store holds checked names, so none is expected) is written as \u00XX.
std::string state_json(const InstanceState& s);

// The whole file. Never throws (see state_json).
void write_state_file(std::ostream& out, const std::vector<InstanceState>& states, uint64_t saved_ms);

// Reads a whole file from the parser's events straight into origins (no JSON tree is ever built). Throws
// std::exception with the problem when anything in it is malformed, of the wrong type or out of range:
// the caller then ignores the file whole.
std::vector<InstanceState> read_state_file(std::istream& in);

}  // namespace glbd::sync
