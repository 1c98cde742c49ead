// sync/transfer/codec — the `_glbd.` zone on the wire, shared by the serving and the pulling side: reports as
// TXT records (encode, Decoder), the reader of a transfer message and of a peer's request (the message
// writer: message.hpp). Internal to sync/; written and read with the wire layer.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/wire/builder.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"
#include "sync/state.hpp"
#include "sync/transfer/message.hpp"

namespace glbd::sync {

struct Report {
    InstanceState state;
    uint64_t age_ms = 0;
    bool has_data = true;  // false: the origin record only (version, heartbeat, age), "data=0"
    bool skipped = false;  // its data came, but was held already at this version (Decoder::skip_held): unread
    // Its data is the outside verdicts alone ("part=outside"): the rest is as at state.base_version, which
    // the puller holds (the serving side sends it so only to a puller that says it holds that; Pulls::take
    // puts the two together).
    bool outside_only = false;
};
// The largest TXT record encode() writes (a host's endpoints continue in "more=1" records beyond it).
constexpr size_t kMaxRecordBytes = 8000;
// A host record without "ttl=" has this TTL: every decoder since the TXT encoding reads it so, and encode()
// leaves out a TTL of this value (7 bytes of the ~60 a host takes).
constexpr uint32_t kUnwrittenTtl = 60;
// The records of a transfer's header, and of one origin's report (appended to `out`), as encode() writes them.
std::vector<std::string> encode_header(const std::string& from);
void encode_report(const Report& r, std::vector<std::vector<std::string>>& out);
// The same from a state as it is stored, with the heartbeat and age to send (no copy of the state).
void encode_report(const InstanceState& s, uint64_t heartbeat, uint64_t age_ms, bool has_data,
                   std::vector<std::vector<std::string>>& out);
// The TXT records' text strings, one vector per record, in zone order (without the SOAs).
std::vector<std::vector<std::string>> encode(const std::string& from, const std::vector<Report>& reports);
// The origin record's first fields (origin, inc, version, heartbeat, age), with or without data; what follows
// them is "data=0" or the data fields.
constexpr size_t kOriginFields = 5;
std::vector<std::string> origin_fields(const InstanceState& s, uint64_t heartbeat, uint64_t age_ms);
inline constexpr std::string_view kNoData = "data=0";
// One origin's data as it goes on the wire, encoded once per state and sent as it is in every transfer that
// carries it (a relay serves the same report to many pullers; serving.cpp keeps one per origin until its data
// changes): the records encode_report() writes with data, less the origin record's first kOriginFields.
struct EncodedData {
    struct Record {
        size_t end;  // where its RDATA ends in `rdata` (it begins where the record before it ends)
        bool host;   // a host's record (owner h<N>), else an override, a zone record or the groups (v<N>)
    };
    std::string origin_fields;  // the origin record's data fields (loc=, group=, reach=, dnskey=) as RDATA
    std::string rdata;          // every data record's character-strings, one record after another
    std::vector<Record> records;
};
std::shared_ptr<const EncodedData> encode_data(const InstanceState& s);
// The same with the outside verdicts alone ("part=outside", "base=N"): what a puller that holds the origin's
// life at its base_version or later lacks when only the verdicts changed since.
std::shared_ptr<const EncodedData> encode_outside_data(const InstanceState& s);
inline constexpr std::string_view kOutsidePart = "part=outside";
// The reader of a transfer's TXT records, one record at a time: each origin's report is handed on as soon as
// the next origin record (or the end) shows it complete, so a reader holds one report, never the transfer.
class Decoder {
public:
    // The most one origin's records may carry (the other limits, in ReportLimits, are checked on the whole
    // report by check_report): about 100,000 hosts of a few endpoints each.
    static constexpr size_t kMaxReportBytes = 64u << 20;

    using Record = std::span<const std::string_view>;  // one TXT record's character-strings
    // Reads one record; a report it completes is appended to `done`. False when the record is malformed or
    // a limit is passed (see error()): the reports handed on before it stay good, nothing more is read.
    // Nothing is kept of `record`'s bytes: it may go when the call returns.
    bool add(Record record, std::vector<Report>& done);
    bool add(const std::vector<std::string>& record, std::vector<Report>& done);
    // The pulling side's: an origin `held` says it holds at the report's incarnation and version is read as a
    // heartbeat (has_data false, `skipped`): its data records are skipped, counted against the report's size
    // limit but not decoded (a version names one state of an origin's data; a fresh node pulling many peers
    // at once otherwise decodes each origin from every relay that sends it).
    void skip_held(std::function<bool(const InstanceState&)> held) { held_ = std::move(held); }
    // The pulling side's: a report's host names are taken from the list `names` gives for its origin (the one
    // held, or another cluster's: NameSharer), so a name the puller holds costs no text of its own.
    void share_names(std::function<HostList(const InstanceState&)> names) { names_for_ = std::move(names); }
    // The end of the transfer: the last report, if any, is appended to `done`.
    void finish(std::vector<Report>& done);
    const std::string& from() const { return from_; }
    const std::string& error() const { return error_; }
    size_t origins() const { return origins_; }
    bool over_limit() const { return over_limit_; }  // the error is a limit passed, not a malformed record

private:
    bool bad(const std::string& why, bool limit = false);
    bool add_origin(Record rec, std::string_view v0, std::vector<Report>& done);
    bool add_host(Record rec, std::string_view v0);
    bool add_zone(Record rec, std::string_view v0);
    bool add_check(Record rec, std::string_view v0);
    bool add_outside(Record rec, std::string_view v0);
    bool add_override(Record rec, std::string_view v0);
    bool add_active_groups(Record rec, std::string_view v0);
    std::optional<Report> cur_;
    std::optional<std::pair<SharedText, SharedText>> left_out_;  // the host (and entry) just left out: its more=
    std::function<bool(const InstanceState&)> held_;
    std::function<HostList(const InstanceState&)> names_for_;
    NameSharer names_;       // cur_'s host names
    bool skipping_ = false;  // cur_'s data records (held already)
    std::string from_, error_;
    size_t index_ = 0, origins_ = 0, bytes_ = 0, outside_failing_ = 0;
    bool over_limit_ = false;
};

// Parses the strings of every TXT record of a transfer. Returns false (with `error`) on a malformed one.
bool decode(const std::vector<std::vector<std::string>>& records, std::string& from, std::vector<Report>& out,
            std::string& error);

// The TXT records of one message as views into it, valid while the message is: record i is
// strings[ends[i - 1]] up to strings[ends[i]] (one allocation for a message's records, not one per string).
struct TxtViews {
    std::vector<std::string_view> strings;
    std::vector<size_t> ends;
    [[nodiscard]] size_t size() const { return ends.size(); }
    Decoder::Record operator[](size_t i) const {
        size_t begin = i ? ends[i - 1] : 0;
        return Decoder::Record(strings).subspan(begin, ends[i] - begin);
    }
    void clear() { strings.clear(), ends.clear(); }
};
// The pulling side's reading of one transfer message: the SOA serials and every TXT record's strings of
// its answer section (appended). False when the message is malformed. (The copying form: tests, fuzzing.)
bool parse_transfer_answers(const uint8_t* m, size_t len, TxtViews& txts, int& soas, uint32_t& serial);
bool parse_transfer_answers(const uint8_t* m, size_t len, std::vector<std::vector<std::string>>& txts, int& soas,
                            uint32_t& serial);

// What a transfer's message is given room for at once: its budget, a record that passes it, and the TSIG.
inline constexpr size_t kMessageRoom = kMessageBudget + kMaxRecordBytes + 512;

// The pulling side's request, before signing: a NOTIFY (SOA question), or an IXFR that says which generation
// of the peer's state we have (the authority SOA's serial; 0: none) and which versions we hold (`have`
// strings: origin@version/incarnation) so that the peer sends only what we lack.
// `relay` false adds "relay=0": data for the server's own origin only, heartbeats for the others. Every
// request says "parts=outside": an origin whose outside verdicts alone changed since the version held may come
// as those alone (Report::outside_only; an older server ignores the string and sends everything). Every
// request, NOTIFYs too, carries a random "nonce=", so that no two are signed alike (a server refuses a MAC it
// has seen); a server reads past it, as past any string it does not know.
std::vector<uint8_t> sync_request(bool notify, uint32_t generation, std::vector<std::string> have, bool relay = true);
constexpr std::string_view kOwnOnly = "relay=0";
constexpr std::string_view kTakesParts = "parts=outside";
constexpr std::string_view kNonce = "nonce=";
constexpr std::string_view kHave = "have=";  // and origin@version/incarnation: one held

// A heartbeat ("beat", docs/sync.md): a NOTIFY for `_glbd.` sent over UDP to every member each
// syncInterval, signed like every sync message. Its first TXT record is the header with the beat's fields;
// then origin records without data: the sender's own (version, heartbeat) and those it relays (with their
// age), as many as fit in kMaxBeatBytes.
struct Beat {
    std::string from;                  // the sender's origin
    uint64_t seq = 0;                  // grows by one with every beat the sender sends (to all members alike)
    uint64_t echo = 0;                 // the last seq the sender received from the receiver (0: none yet)
    uint64_t held_ms = 0;              // how long before this beat that one arrived
    std::vector<SocketAddress> reach;  // where the sender is reached ("reach=", sync/members.hpp; older: none)
    std::vector<Report> reports;
};
inline constexpr size_t kMaxBeatBytes = 1200;  // with its TSIG: under any path's MTU, never fragmented
// The unsigned beat: the header, then `origins` (encode_report() records without data) while they fit in
// `budget` bytes. `dropped` counts those left out.
std::vector<uint8_t> beat_message(uint16_t id, const Beat& header, const std::vector<std::vector<std::string>>& origins,
                                  size_t budget, size_t* dropped = nullptr);
// The bytes one of `origins` takes in a beat: its TXT record whole.
size_t beat_record_bytes(const std::vector<std::string>& strings);
// A received beat (its signature is the caller's to check): false, with `error`, for anything else, a beat
// that carries data, or a malformed record.
bool parse_beat(const uint8_t* m, size_t len, Beat& out, std::string& error);

// What a puller says it holds of an origin ("have=cluster/instance@version/incarnation").
struct Held {
    uint64_t version = 0;
    uint64_t incarnation = 0;
};

// A peer's request as the serving side reads it (with the wire layer: every offset checked).
struct SyncRequest {
    uint16_t id = 0;
    uint8_t opcode = 0;  // wire::opcode::QUERY or NOTIFY
    uint16_t qtype = 0, qclass = 0;
    std::optional<uint32_t> known_serial;  // IXFR: the authority SOA's serial, the generation the puller has
    std::map<std::string, Held> have;      // the versions it holds: those need no data
    bool own_only = false;                 // "relay=0": data for the server's own origin only
    bool takes_parts = false;              // "parts=outside": it reads a report of outside verdicts alone
};
// Reads a query or NOTIFY whose one question is `_glbd.`; false for anything else (a response, another
// name or opcode, a malformed message): then the message is not sync's.
bool parse_sync_request(const uint8_t* msg, size_t len, SyncRequest& out);
// The answer to `req` with `rcode` and its question only (REFUSED, NOTAUTH), unsigned.
std::vector<uint8_t> error_response(const SyncRequest& req, uint8_t rcode);

}  // namespace glbd::sync
