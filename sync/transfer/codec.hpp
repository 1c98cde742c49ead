// sync/transfer/codec — the `_glbd.` zone on the wire, shared by the serving and the pulling side: the
// message writer for transfers, the reader of a transfer message, and small ldns and address helpers.
// Internal to sync/.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/wire/builder.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"
#include "sync/state.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

namespace glbd::sync {

// The pulling side's reading of one transfer message: the SOA serials and every TXT record's strings of
// its answer section. False when the message is malformed. (Exposed for tests and fuzzing.)
bool parse_transfer_answers(const uint8_t* m, size_t len, std::vector<std::vector<std::string>>& txts, int& soas,
                            uint32_t& serial);

inline constexpr size_t kMessageBudget = 32000;  // split transfers into messages of about this size
inline constexpr uint16_t kOpNotify = 4;

using PktPtr = std::unique_ptr<ldns_pkt, void (*)(ldns_pkt*)>;
inline PktPtr make_pkt(ldns_pkt* p) { return PktPtr(p, ldns_pkt_free); }

inline std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s.empty() || s.back() != '.') s += '.';
    return s;
}

inline std::string rdf_text(const ldns_rdf* r) {
    char* s = ldns_rdf2str(r);
    std::string out = s ? s : "";
    free(s);
    return out;
}

inline bool is_sync_name(const ldns_rdf* name) { return lower(rdf_text(name)) == kSyncZone; }

inline std::string ip_of(const std::string& addr) {  // "1.2.3.4:53" / "[::1]:53" -> the address part
    if (!addr.empty() && addr[0] == '[') return addr.substr(1, addr.find(']') - 1);
    return addr.substr(0, addr.rfind(':'));
}

// A DNS message written straight to wire: header, an optional `_glbd.` question, then records, written in
// section order (answer, authority, additional).
class Message {
public:
    enum class Section : uint8_t { answer, authority, additional };

    Message(uint16_t id, uint16_t flags) { b_.u16(id), b_.u16(flags), b_.u16(0), b_.u16(0), b_.u16(0), b_.u16(0); }
    void question(uint16_t qtype) {
        name(kSyncZone), b_.u16(qtype), b_.u16(wire::kClassIn);
        qd_ = 1;
    }
    void soa(uint32_t serial, Section in = Section::answer) {
        size_t rd = header(kSyncZone, wire::type::SOA, in);
        name("glbd."), name("hostmaster.glbd.");
        for (uint32_t v : {serial, 1u, 1u, 1u, 1u}) b_.u32(v);
        b_.end_rdata(rd);
    }
    void txt(const std::string& owner, const std::vector<std::string>& strings, Section in = Section::answer) {
        size_t rd = header(owner, wire::type::TXT, in);
        for (const auto& s : strings) b_.text(s);
        b_.end_rdata(rd);
    }
    [[nodiscard]] size_t size() const { return b_.size(); }
    std::vector<uint8_t> finish() {
        b_.patch16(4, static_cast<uint16_t>(qd_));
        for (int i = 0; i < 3; ++i) b_.patch16(6 + 2 * static_cast<size_t>(i), static_cast<uint16_t>(counts_[i]));
        return std::move(b_.vec());
    }

private:
    void name(const std::string& n) { b_.bytes(wire::name_to_wire(n).value_or(std::string(1, '\0'))); }
    // Owner, type, class IN, TTL 0; returns where the RDATA starts.
    size_t header(const std::string& owner, uint16_t type, Section in) {
        name(owner), b_.u16(type), b_.u16(wire::kClassIn), b_.u32(0);
        ++counts_[static_cast<int>(in)];
        return b_.begin_rdata();
    }
    wire::Builder b_;
    unsigned qd_ = 0, counts_[3] = {};
};

// The pulling side's request, before signing: a NOTIFY (SOA question), or an IXFR that says which generation
// of the peer's state we have (the authority SOA's serial; 0: none) and which versions we hold (`have`
// strings: origin@version/incarnation) so that the peer sends only what we lack.
// `relay` false adds "relay=0": data for the server's own origin only, heartbeats for the others.
std::vector<uint8_t> sync_request(bool notify, uint32_t generation, const std::vector<std::string>& have,
                                  bool relay = true);
constexpr std::string_view kOwnOnly = "relay=0";

}  // namespace glbd::sync
