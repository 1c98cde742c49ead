#include "sync/transfer/codec.hpp"

#include "resolver/wire.hpp"

namespace glbd::sync {

bool parse_transfer_answers(const uint8_t* m, size_t len, std::vector<std::vector<std::string>>& txts, int& soas,
                   uint32_t& serial) {
    if (len < 12) return false;
    unsigned qd = wire::get16(m + 4), an = wire::get16(m + 6);
    size_t pos = 12;
    for (unsigned i = 0; i < qd; ++i) {
        pos = wire::skip_name(m, len, pos);
        if (pos == 0 || pos + 4 > len) return false;
        pos += 4;
    }
    for (unsigned i = 0; i < an; ++i) {
        pos = wire::skip_name(m, len, pos);
        if (pos == 0 || pos + 10 > len) return false;
        uint16_t type = wire::get16(m + pos);
        size_t rdlen = wire::get16(m + pos + 8), rd = pos + 10;
        pos = rd + rdlen;
        if (pos > len) return false;
        if (type == LDNS_RR_TYPE_SOA) {
            size_t p = wire::skip_name(m, pos, rd);
            p = p ? wire::skip_name(m, pos, p) : 0;
            if (p == 0 || p + 20 > pos) return false;
            serial = wire::get32(m + p);
            ++soas;
        } else if (type == LDNS_RR_TYPE_TXT) {
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

}  // namespace glbd::sync
