// sync/state_file — the stateDir file (state.json) as text: {"format": 3, "saved": ms, "origins": [one
// InstanceState each]}. Format 2 writes each host as a row, [name, ttl, [[target, healthy], ...], [weight,
// geo, defaultGeo]] (the last only with loadBalancing), less than half the bytes of format 1's objects; format
// 3 adds the entry's name, [..., [weight, geo, defaultGeo] or null, entry], when it has one. All three are
// read (a file without "format" is format 1), a newer format is refused by name. An origin with static records
// (from its DNSRecords) has "records": [[name, type, ttl, [data, ...]], ...], which earlier readers skip. The text is
// made and read by pure functions; save_state_file() writes it into stateDir safely (sync/state_dir.cpp decides
// when), read_state_dir() reads it back, and a StateReadAhead does that on a thread of its own at start.
#pragma once

#include <cstdint>
#include <future>
#include <istream>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "resolver/base/result.hpp"
#include "sync/state.hpp"

namespace glbd::sync {

// What write_state_file writes; read_state_file reads 1, 2 and 3. Format 3 gives a host row its entry (a cluster
// may hold several entries of one name).
constexpr unsigned kStateFileFormat = 3;

// One origin as a JSON object. Never throws: a byte that is not printable ASCII (a peer's report is data, not
// text we vouch for; the store holds checked names, so none is expected) is written as \u00XX.
std::string state_json(const InstanceState& s);

// The whole file. Never throws (see state_json).
void write_state_file(std::ostream& out, const std::vector<InstanceState>& states, uint64_t saved_ms);

// Reads a whole file from the parser's events straight into origins (no JSON tree is ever built). Throws
// std::exception with the problem when anything in it is malformed, of the wrong type or out of range:
// the caller then ignores the file whole. From the file's text (as read_file gives it), or from a stream.
// A text of `two_threads_from` bytes or more is read on two threads, the later origins on one of its own (at
// 10,000 hosts x 20 clusters the file's 18 MB take a quarter of a second to read on one, before the first
// answer): the same origins, and for a bad file the same error, as read on one.
constexpr size_t kStateTwoThreadsFrom = size_t{1} << 20;
std::vector<InstanceState> read_state_file(std::string_view text, size_t two_threads_from = kStateTwoThreadsFrom);
std::vector<InstanceState> read_state_file(std::istream& in);  // tests and fuzz targets: the whole stream, unbounded
// Where the top-level "origins" array's origins lie in `text`, found from its strings and nesting alone (no value
// read): what read_state_file shares among its threads. Nothing for a text not shaped as glbd writes it (one
// "origins" array of at most ReportLimits::kMaxOrigins objects, a comma between each two): read on one thread,
// which says what is wrong.
struct OriginSpans {
    std::vector<std::pair<size_t, size_t>> origins;  // [begin, end) of each
    size_t close = 0;                                // the array's ']'
};
std::optional<OriginSpans> origin_spans(std::string_view text);
// The reader (state_file_read.cpp) for read_state_file: a whole file, or each origin object of `spans` alone.
std::vector<InstanceState> read_origins_whole(std::string_view text);
std::vector<InstanceState> read_origins_alone(std::string_view text, std::span<const std::pair<size_t, size_t>> spans);
// The most a state file may hold: 10,000 hosts x 20 clusters take 18 MB.
constexpr size_t kMaxStateFileBytes = size_t{1} << 30;

constexpr const char* kStateFileName = "state.json";
// Writes `states` to DIR/state.json so that a crash leaves the old file or the new one, whole (save_file in
// resolver/base/atomic_file.hpp); why not, when it could not.
Status save_state_file(const std::string& dir, const std::vector<InstanceState>& states, uint64_t saved_ms);

// DIR/state.json read: its origins, or why not (`missing`: there is no file, which is nothing to warn of).
struct StateFileRead {
    std::vector<InstanceState> origins;
    std::string error;
    bool missing = false;
};
StateFileRead read_state_dir(const std::string& dir);  // never throws

// read_state_dir() begun on a thread of its own before the config is read whole: `glbd serve` begins it from
// the config parser's first sight of stateDir (conf::LoadHooks) and the sync service takes it when it is for
// the config's stateDir. At 10,000 hosts x 20 clusters both the config's hosts and the file take a fifth of a
// second or more to parse: on a 2-core machine the two no longer add up before the first answer. The thread
// reads the file and nothing else; its result is handed over by the future.
class StateReadAhead {
public:
    StateReadAhead() = default;
    StateReadAhead(StateReadAhead&&) = default;
    StateReadAhead& operator=(StateReadAhead&&) = delete;
    ~StateReadAhead();                            // waits for the thread, if one is still reading
    void begin(const std::string& dir) noexcept;  // the first call begins; later ones are ignored
    // What was read for `dir`, once it has been (waiting for it); nothing when nothing was begun, or it was
    // begun for another directory (the config's stateDir was not the first text the parser saw).
    std::optional<StateFileRead> take(const std::string& dir);

private:
    bool begun_ = false;
    std::string dir_;
    std::future<StateFileRead> read_;
};

}  // namespace glbd::sync
