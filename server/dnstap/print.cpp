// `glbd explain --dnstap FILE`: every response of a dnstap file, one line each, with the reason glbd logged
// beside it (dnstap's `extra`). The DNS message is read with ldns; a frame or message that is not what it
// should be is reported on its line, never trusted.
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>

#include "resolver/base/log_throttle.hpp"
#include "server/dnstap/dnstap.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

namespace glbd::dnstap {

namespace {

// An ldns text, freed. ldns writes most bytes of a name or a string as \DDD, but not all: a tab in an ISDN
// address came out as it is. Any byte outside printable ASCII left becomes \xNN (ldns's own escapes stay).
std::string owned(char* s) {
    std::string out = s ? s : "?";
    free(s);  // NOLINT(cppcoreguidelines-no-malloc): ldns's strings are malloc'd
    return escape_bytes(out, [](unsigned char ch) { return ch < 0x20 || ch >= 0x7f; });
}

// "shop.glb.example.test. A NOERROR: A 192.0.2.10, A 192.0.2.11" for a response's bytes.
std::string summary(const std::vector<uint8_t>& msg) {
    ldns_pkt* raw = nullptr;
    if (ldns_wire2pkt(&raw, msg.data(), msg.size()) != LDNS_STATUS_OK || !raw) return "(not a DNS message)";
    std::unique_ptr<ldns_pkt, void (*)(ldns_pkt*)> p(raw, ldns_pkt_free);
    std::string out;
    if (ldns_rr_list* q = ldns_pkt_question(p.get()); q && ldns_rr_list_rr_count(q) > 0) {
        ldns_rr* rr = ldns_rr_list_rr(q, 0);
        out = owned(ldns_rdf2str(ldns_rr_owner(rr))) + " " + owned(ldns_rr_type2str(ldns_rr_get_type(rr))) + " ";
    }
    const ldns_lookup_table* rc = ldns_lookup_by_id(ldns_rcodes, ldns_pkt_get_rcode(p.get()));
    out += rc ? rc->name : "RCODE" + std::to_string(ldns_pkt_get_rcode(p.get()));
    ldns_rr_list* an = ldns_pkt_answer(p.get());
    for (size_t i = 0; an && i < ldns_rr_list_rr_count(an); ++i) {
        ldns_rr* rr = ldns_rr_list_rr(an, i);
        out += (i == 0 ? ": " : ", ") + owned(ldns_rr_type2str(ldns_rr_get_type(rr)));
        if (ldns_rr_rd_count(rr) > 0) out += " " + owned(ldns_rdf2str(ldns_rr_rdf(rr, 0)));
    }
    return out;
}

std::string when(uint64_t sec, uint32_t nsec) {
    time_t t = static_cast<time_t>(sec);
    tm utc{};
    gmtime_r(&t, &utc);
    char buf[64];
    size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &utc);
    std::snprintf(buf + n, sizeof buf - n, ".%06uZ", nsec / 1000 % 1000000);
    return buf;
}

}  // namespace

std::string describe(const Decoded& d) {
    std::string client = d.client.address.family == 6 ? "[" + d.client.address.str() + "]" : d.client.address.str();
    std::string line = when(d.time_sec, d.time_nsec) + " " + (d.tcp ? "TCP " : "UDP ") + client + "#" +
                       std::to_string(d.client.port) + " " + summary(d.message);
    if (!d.extra.empty()) line += " | " + printable(d.extra);
    return line;
}

int print_responses(const std::string& path, std::FILE* out) {
    std::string error;
    size_t frames = 0, responses = 0, bad = 0;
    bool ok = read_file(
        path,
        [&](const uint8_t* data, size_t len) {
            ++frames;
            Decoded d;
            if (!decode(data, len, d)) {
                ++bad;
                std::fprintf(out, "frame %zu: not a dnstap message\n", frames);
                return;
            }
            if (!d.response) return;
            ++responses;
            std::fprintf(out, "%s\n", describe(d).c_str());
        },
        error);
    std::fflush(out);
    if (!ok) std::fprintf(stderr, "glbd explain --dnstap: %s\n", error.c_str());
    std::fprintf(stderr, "%zu frame(s), %zu response(s), %zu not understood\n", frames, responses, bad);
    return ok && bad == 0 ? 0 : 2;
}

}  // namespace glbd::dnstap
