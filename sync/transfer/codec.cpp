#include "sync/transfer/codec.hpp"

#include <openssl/rand.h>

#include "resolver/wire/wire.hpp"

namespace glbd::sync {

bool parse_transfer_answers(const uint8_t* m, size_t len, std::vector<std::vector<std::string>>& txts, int& soas,
                            uint32_t& serial) {
    if (len < 12) return false;
    size_t start = wire::skip_questions(m, len, wire::kHeaderSize, wire::get16(m + 4));
    wire::Records records(m, len, start);
    wire::Record rr;
    for (unsigned i = 0, an = wire::get16(m + 6); i < an; ++i) {
        if (!records.next(rr)) return false;
        const size_t rd = rr.rdata, pos = rr.end();
        const uint16_t type = rr.type;
        if (type == wire::type::SOA) {
            size_t p = wire::skip_name(m, pos, rd);
            p = p ? wire::skip_name(m, pos, p) : 0;
            if (p == 0 || p + 20 > pos) return false;
            serial = wire::get32(m + p);
            ++soas;
        } else if (type == wire::type::TXT) {
            std::vector<std::string> strings;
            for (size_t p = rd; p < pos;) {
                size_t n = m[p];
                if (p + 1 + n > pos) return false;
                strings.emplace_back(reinterpret_cast<const char*>(m + p + 1), n);
                p += 1 + n;
            }
            txts.push_back(std::move(strings));
        }
    }
    return true;
}

std::vector<uint8_t> sync_request(bool notify, uint32_t generation, const std::vector<std::string>& have, bool relay) {
    uint16_t id = 0;
    RAND_bytes(reinterpret_cast<unsigned char*>(&id), sizeof id);  // on failure, 0: the ID is not security
    Message m(id, notify ? static_cast<uint16_t>(kOpNotify << 11 | 0x0400) : 0);  // NOTIFY is sent with AA
    m.question(notify ? wire::type::SOA : wire::type::IXFR);
    if (!notify) {
        m.soa(generation, Message::Section::authority);
        if (relay) {
            m.txt(kSyncZone, have, Message::Section::additional);
        } else {
            std::vector<std::string> strings{std::string(kOwnOnly)};
            strings.insert(strings.end(), have.begin(), have.end());
            m.txt(kSyncZone, strings, Message::Section::additional);
        }
    }
    return m.finish();
}

}  // namespace glbd::sync
