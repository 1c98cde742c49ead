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
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "sync/state.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

namespace glbd::sync {

// The pulling side's reading of one transfer message: the SOA serials and every TXT record's strings of
// its answer section. False when the message is malformed. (Exposed for tests and fuzzing.)
bool parse_transfer_answers(const uint8_t* m, size_t len, std::vector<std::vector<std::string>>& txts, int& soas,
                            uint32_t& serial);

inline constexpr size_t kMaxStateBytes = 16u << 20;  // a peer sending more is cut off
inline constexpr size_t kMessageBudget = 32000;      // split transfers into messages of about this size
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


// A DNS message written straight to wire: header, an optional `_glbd.` question, answer records.
class Message {
public:
    Message(uint16_t id, uint16_t flags) {
        put16(id), put16(flags), put16(0), put16(0), put16(0), put16(0);
    }
    void question(uint16_t qtype) {
        name(kSyncZone), put16(qtype), put16(1);
        qd_ = 1;
    }
    void soa(uint32_t serial) {
        std::string rd = wire("glbd.") + wire("hostmaster.glbd.");
        for (uint32_t v : {serial, 1u, 1u, 1u, 1u}) {
            for (int sft = 24; sft >= 0; sft -= 8) rd.push_back(static_cast<char>(v >> sft));
        }
        rr(kSyncZone, LDNS_RR_TYPE_SOA, rd);
    }
    void txt(const std::string& owner, const std::vector<std::string>& strings) {
        std::string rd;
        for (const auto& s : strings) {
            size_t n = std::min<size_t>(s.size(), 255);
            rd.push_back(static_cast<char>(n));
            rd.append(s, 0, n);
        }
        rr(owner, LDNS_RR_TYPE_TXT, rd);
    }
    [[nodiscard]] size_t size() const { return b_.size(); }
    std::vector<uint8_t> finish() {
        b_[4] = 0, b_[5] = static_cast<uint8_t>(qd_);
        b_[6] = static_cast<uint8_t>(an_ >> 8), b_[7] = static_cast<uint8_t>(an_);
        return b_;
    }

private:
    static std::string wire(const std::string& n) { return conf::name_to_wire(n).value_or(std::string(1, '\0')); }
    void put16(uint16_t v) { b_.push_back(static_cast<uint8_t>(v >> 8)), b_.push_back(static_cast<uint8_t>(v)); }
    void name(const std::string& n) {
        std::string w = wire(n);
        b_.insert(b_.end(), w.begin(), w.end());
    }
    void rr(const std::string& owner, uint16_t type, const std::string& rdata) {
        name(owner), put16(type), put16(1), put16(0), put16(0), put16(static_cast<uint16_t>(rdata.size()));
        b_.insert(b_.end(), rdata.begin(), rdata.end());
        ++an_;
    }
    std::vector<uint8_t> b_;
    unsigned qd_ = 0, an_ = 0;
};

}  // namespace glbd::sync
