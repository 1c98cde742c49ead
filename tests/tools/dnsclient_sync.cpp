// dnsclient's modes that play a sync peer: a fake peer serving signed state of the test's making, a catcher of
// glbd's NOTIFY and transfer requests, an unsigned sync flood.
#include "tests/tools/dnsclient.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

namespace glbd::dnsclient {
namespace {

// A TCP listening socket on ADDR:PORT, or -1.
int listen_on(const char* host, int port) {
    socklen_t len = 0;
    sockaddr_storage ss = target(host, port, len);
    int lfd = socket(ss.ss_family, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(lfd, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(lfd, 16) != 0) return close(lfd), -1;
    return lfd;
}

}  // namespace

// A peer with a state of its own making: listens on ADDR:PORT (TCP) for N connections (or SECONDS) and
// answers every transfer request that verifies with KEY/SECRET with the zone `_glbd.`: an SOA, the TXT
// records of FILE (presentation format, one per line, \DDD escapes for any byte), an SOA; signed with
// ldns over the request's MAC. What a buggy or compromised cluster that holds the key could send.
int fake_peer(const char* host, int port, int n, const char* key, const char* secret, const char* file) {
    std::vector<ldns_rr*> records;
    FILE* f = std::fopen(file, "r");
    if (!f) return std::perror(file), 2;
    char line[65536];
    while (std::fgets(line, sizeof line, f)) {
        if (line[0] == '\n' || line[0] == '#') continue;
        ldns_rr* rr = nullptr;
        if (ldns_rr_new_frm_str(&rr, line, 0, nullptr, nullptr) != LDNS_STATUS_OK)
            return std::fprintf(stderr, "bad record: %s", line), 2;
        records.push_back(rr);
    }
    std::fclose(f);
    int lfd = listen_on(host, port);
    if (lfd < 0) return std::perror("bind"), 2;
    int served = 0;
    for (int i = 0; i < n; ++i) {
        int fd = accept(lfd, nullptr, nullptr);
        if (fd < 0) break;
        uint8_t lenb[2], buf[65535];
        ldns_pkt* req = nullptr;
        size_t mlen = 0;
        if (read_full(fd, lenb, 2) && read_full(fd, buf, mlen = static_cast<size_t>(lenb[0] << 8 | lenb[1])) &&
            ldns_wire2pkt(&req, buf, mlen) == LDNS_STATUS_OK && ldns_pkt_tsig(req) &&
            ldns_pkt_tsig_verify(req, buf, mlen, key, secret, nullptr) &&
            ldns_pkt_get_opcode(req) == LDNS_PACKET_QUERY) {
            ldns_pkt* resp = ldns_pkt_new();
            ldns_pkt_set_id(resp, ldns_pkt_id(req));
            ldns_pkt_set_qr(resp, true);
            ldns_pkt_set_aa(resp, true);
            ldns_pkt_push_rr(resp, LDNS_SECTION_QUESTION, ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(req), 0)));
            ldns_rr* soa = nullptr;
            ldns_rr_new_frm_str(&soa, "_glbd. 0 IN SOA glbd. hostmaster.glbd. 7 1 1 1 1", 0, nullptr, nullptr);
            ldns_pkt_push_rr(resp, LDNS_SECTION_ANSWER, ldns_rr_clone(soa));
            for (ldns_rr* rr : records) ldns_pkt_push_rr(resp, LDNS_SECTION_ANSWER, ldns_rr_clone(rr));
            ldns_pkt_push_rr(resp, LDNS_SECTION_ANSWER, soa);
            const ldns_rdf* mac = ldns_rr_rdf(ldns_pkt_tsig(req), 3);
            uint8_t* wire = nullptr;
            size_t wlen = 0;
            if (ldns_pkt_tsig_sign(resp, key, secret, 300, "hmac-sha256.", mac) == LDNS_STATUS_OK &&
                ldns_pkt2wire(&wire, resp, &wlen) == LDNS_STATUS_OK) {
                uint8_t hdr[2] = {static_cast<uint8_t>(wlen >> 8), static_cast<uint8_t>(wlen)};
                if (write(fd, hdr, 2) == 2 && write(fd, wire, wlen) == static_cast<ssize_t>(wlen)) ++served;
            }
            free(wire);
            ldns_pkt_free(resp);
        }
        if (req) ldns_pkt_free(req);
        close(fd);
    }
    close(lfd);
    for (ldns_rr* rr : records) ldns_rr_free(rr);
    std::printf("served=%d\n", served);
    return served > 0 ? 0 : 1;
}

// A peer that glbd talks to: listens on ADDR:PORT (TCP), reads the first message of each connection,
// verifies its TSIG with ldns (key KEY, base64 SECRET) and prints "opcode=N qtype=T tsig=ok|BAD", until it
// has seen a NOTIFY and a transfer request, both verified, or N connections. Answers nothing.
int catch_requests(const char* host, int port, int n, const char* key, const char* secret) {
    int lfd = listen_on(host, port);
    if (lfd < 0) return std::perror("bind"), 2;
    bool notify_ok = false, transfer_ok = false;
    for (int i = 0; i < n && !(notify_ok && transfer_ok); ++i) {
        int fd = accept(lfd, nullptr, nullptr);
        if (fd < 0) return std::perror("accept"), 2;
        uint8_t lenb[2], buf[65535];
        if (read_full(fd, lenb, 2) && read_full(fd, buf, static_cast<size_t>(lenb[0] << 8 | lenb[1]))) {
            size_t mlen = static_cast<size_t>(lenb[0] << 8 | lenb[1]);
            ldns_pkt* p = nullptr;
            if (ldns_wire2pkt(&p, buf, mlen) == LDNS_STATUS_OK) {
                bool ok = ldns_pkt_tsig(p) && ldns_pkt_tsig_verify(p, buf, mlen, key, secret, nullptr);
                int opcode = ldns_pkt_get_opcode(p);
                int qtype = ldns_rr_list_rr_count(ldns_pkt_question(p))
                                ? ldns_rr_get_type(ldns_rr_list_rr(ldns_pkt_question(p), 0))
                                : 0;
                std::printf("opcode=%d qtype=%d tsig=%s\n", opcode, qtype, ok ? "ok" : "BAD");
                std::fflush(stdout);
                if (ok && opcode == LDNS_PACKET_NOTIFY) notify_ok = true;
                if (ok && opcode == LDNS_PACKET_QUERY && (qtype == LDNS_RR_TYPE_IXFR || qtype == LDNS_RR_TYPE_AXFR))
                    transfer_ok = true;
                ldns_pkt_free(p);
            }
        }
        close(fd);
    }
    close(lfd);
    return notify_ok && transfer_ok ? 0 : 1;
}

// Unsigned sync requests (SOA for `_glbd.`) written as fast as the server takes them for SECONDS, nothing
// read; a connection the server closes is replaced. Prints what was written.
int syncflood(const char* host, int port, int seconds) {
    std::vector<uint8_t> burst;
    for (int i = 0; i < 2000; ++i) {
        QueryOpts o;
        o.id = static_cast<uint16_t>(i);
        o.edns = false;
        frame(burst, make_query("_glbd.", 6, o));
    }
    auto end = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    long connections = 0;
    unsigned long long bytes = 0;
    int fd = -1;
    size_t off = 0;
    while (std::chrono::steady_clock::now() < end) {
        if (fd < 0) {
            fd = connect_from(host, port, nullptr);
            if (fd < 0) return std::perror("connect"), 1;
            ++connections, off = 0;
        }
        ssize_t n = ::send(fd, burst.data() + off, burst.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            bytes += static_cast<unsigned long long>(n);
            off = (off + static_cast<size_t>(n)) % burst.size();
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd p{fd, POLLOUT, 0};
            poll(&p, 1, 50);
        } else {
            close(fd);
            fd = -1;
        }
    }
    if (fd >= 0) close(fd);
    std::printf("connections=%ld bytes=%llu\n", connections, bytes);
    return 0;
}

}  // namespace glbd::dnsclient
