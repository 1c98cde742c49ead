// resolver/wire/query (the queries glbd sends, a response's header and sections, compressed names) judged by
// ldns, and server/app/dns_ask (glbd as a client) against a small server of the test's own on loopback: an
// answer over UDP, a truncated one asked again over TCP, silence.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "resolver/base/fd.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/text.hpp"
#include "server/app/dns_ask.hpp"
#include "tests/dns_util.hpp"

#include <ldns/ldns.h>  // last: it defines a `bool` macro

using namespace glbd;

namespace {

struct PktFree {
    void operator()(ldns_pkt* p) const { ldns_pkt_free(p); }
};
using Pkt = std::unique_ptr<ldns_pkt, PktFree>;

Pkt ldns_read(const std::vector<uint8_t>& wire) {
    ldns_pkt* p = nullptr;
    EXPECT_EQ(ldns_wire2pkt(&p, wire.data(), wire.size()), LDNS_STATUS_OK);
    return Pkt(p);
}

TEST(WireQuery, AQueryAsLdnsReadsIt) {
    wire::QueryOptions o;
    o.id = 0xbeef, o.do_bit = true, o.payload = 1400;
    auto q = wire::make_query(*wire::name_to_wire("Shop.GLB.example.com"), wire::type::DS, o);
    Pkt p = ldns_read(q);
    ASSERT_TRUE(p);
    EXPECT_EQ(ldns_pkt_id(p.get()), 0xbeef);
    EXPECT_FALSE(ldns_pkt_qr(p.get()));
    EXPECT_FALSE(ldns_pkt_rd(p.get()));
    EXPECT_EQ(ldns_pkt_get_opcode(p.get()), LDNS_PACKET_QUERY);
    ASSERT_EQ(ldns_pkt_qdcount(p.get()), 1);
    ldns_rr* question = ldns_rr_list_rr(ldns_pkt_question(p.get()), 0);
    EXPECT_EQ(ldns_rr_get_type(question), LDNS_RR_TYPE_DS);
    EXPECT_EQ(ldns_rr_get_class(question), LDNS_RR_CLASS_IN);
    char* owner = ldns_rdf2str(ldns_rr_owner(question));
    EXPECT_STREQ(owner, "shop.glb.example.com.");
    free(owner);
    EXPECT_TRUE(ldns_pkt_edns(p.get()));
    EXPECT_EQ(ldns_pkt_edns_udp_size(p.get()), 1400);
    EXPECT_TRUE(ldns_pkt_edns_do(p.get()));

    o = {};
    o.rd = true, o.edns = false;
    p = ldns_read(wire::make_query(*wire::name_to_wire("example.com"), wire::type::A, o));
    EXPECT_TRUE(ldns_pkt_rd(p.get()));
    EXPECT_FALSE(ldns_pkt_edns(p.get()));
    EXPECT_EQ(ldns_pkt_arcount(p.get()), 0);
}

// The Client Subnet option as RFC 7871 6 has it: family, source length, scope 0, the address cut to the
// prefix with its host bits cleared (the test's own reading of the option's bytes, addresses from inet_pton).
TEST(WireQuery, ClientSubnetIsCutToItsPrefix) {
    wire::QueryOptions o;
    o.client_subnet = Prefix{test::address_of("10.1.255.7"), 17};
    auto q = wire::make_query(*wire::name_to_wire("a.example"), wire::type::A, o);
    Pkt p = ldns_read(q);
    ASSERT_TRUE(p);
    ldns_rdf* data = ldns_pkt_edns_data(p.get());
    ASSERT_TRUE(data);
    std::vector<uint8_t> option(ldns_rdf_data(data), ldns_rdf_data(data) + ldns_rdf_size(data));
    EXPECT_EQ(option, (std::vector<uint8_t>{0, 8, 0, 7, 0, 1, 17, 0, 10, 1, 128}));
    o.client_subnet = Prefix{test::address_of("2001:db8:ff::1"), 40};
    p = ldns_read(wire::make_query(*wire::name_to_wire("a.example"), wire::type::AAAA, o));
    data = ldns_pkt_edns_data(p.get());
    option.assign(ldns_rdf_data(data), ldns_rdf_data(data) + ldns_rdf_size(data));
    EXPECT_EQ(option, (std::vector<uint8_t>{0, 8, 0, 9, 0, 2, 40, 0, 0x20, 0x01, 0x0d, 0xb8, 0}));
}

// A response made by ldns (names compressed): the header's fields and each record's section.
TEST(WireQuery, AResponsesHeaderAndSectionsAsLdnsWroteThem) {
    ldns_pkt* pkt = nullptr;
    ASSERT_EQ(ldns_pkt_query_new_frm_str(&pkt, "glb.example.com.", LDNS_RR_TYPE_DS, LDNS_RR_CLASS_IN, 0),
              LDNS_STATUS_OK);
    Pkt p(pkt);
    ldns_pkt_set_id(pkt, 77);
    ldns_pkt_set_qr(pkt, true);
    ldns_pkt_set_aa(pkt, true);
    ldns_pkt_set_rcode(pkt, LDNS_RCODE_NXDOMAIN);
    auto add = [&](const char* text, ldns_pkt_section s) {
        ldns_rr* rr = nullptr;
        ASSERT_EQ(ldns_rr_new_frm_str(&rr, text, 0, nullptr, nullptr), LDNS_STATUS_OK);
        ldns_pkt_push_rr(pkt, s, rr);
    };
    add("glb.example.com. 3600 IN DS 12345 13 2 49FD46E6C4B45C55D4AC69CBD3CD34AC1AFE51DE", LDNS_SECTION_ANSWER);
    add("example.com. 60 IN SOA ns.example.com. host.example.com. 1 2 3 4 5", LDNS_SECTION_AUTHORITY);
    add("ns.example.com. 60 IN A 192.0.2.53", LDNS_SECTION_ADDITIONAL);
    uint8_t* raw = nullptr;
    size_t len = 0;
    ASSERT_EQ(ldns_pkt2wire(&raw, pkt, &len), LDNS_STATUS_OK);
    std::vector<uint8_t> msg(raw, raw + len);
    free(raw);

    wire::Header h;
    ASSERT_TRUE(wire::read_header(msg.data(), msg.size(), h));
    EXPECT_EQ(h.id, 77);
    EXPECT_TRUE(h.qr() && h.aa() && !h.tc());
    EXPECT_EQ(h.rcode(), wire::rcode::NXDOMAIN);
    EXPECT_EQ(h.ancount + h.nscount + h.arcount, 3);
    wire::ResponseRecords records(msg.data(), msg.size());
    wire::Record rr;
    wire::Section section{};
    std::vector<std::string> seen;
    std::string owner;
    while (records.next(rr, section)) {
        ASSERT_TRUE(wire::read_name(msg.data(), msg.size(), rr.owner, owner));
        seen.push_back(std::to_string(static_cast<int>(section)) + " " + wire::wire_to_name(owner) + " " +
                       wire::type_name(rr.type));
    }
    EXPECT_TRUE(records.ok());
    EXPECT_EQ(seen, (std::vector<std::string>{"0 glb.example.com DS", "1 example.com SOA", "2 ns.example.com A"}));
    EXPECT_FALSE(wire::read_header(msg.data(), wire::kHeaderSize - 1, h));
}

// Compressed names: pointers followed, lower case; a pointer forward, to itself or in a loop, a name over 255
// bytes and one running off the end are refused.
TEST(WireQuery, CompressedNamesAreReadAndLoopsRefused) {
    std::vector<uint8_t> m(12, 0);
    auto at = m.size();
    for (uint8_t c : std::string("\x03"
                                 "Foo\x07"
                                 "example\x03"
                                 "com\x00",
                                 17))
        m.push_back(c);
    const size_t www = m.size();
    m.insert(m.end(), {3, 'w', 'w', 'w', 0xc0, static_cast<uint8_t>(at + 4)});  // www + a pointer to "example.com"
    std::string out;
    EXPECT_EQ(wire::read_name(m.data(), m.size(), www, out), www + 6);
    EXPECT_EQ(wire::wire_to_name(out), "www.example.com");
    EXPECT_EQ(wire::read_name(m.data(), m.size(), at, out), at + 17);
    EXPECT_EQ(wire::wire_to_name(out), "foo.example.com");

    std::vector<uint8_t> forward(12, 0);
    forward.insert(forward.end(), {0xc0, 14, 0});  // points past itself
    EXPECT_EQ(wire::read_name(forward.data(), forward.size(), 12, out), 0u);
    std::vector<uint8_t> self(12, 0);
    self.insert(self.end(), {0xc0, 12});
    EXPECT_EQ(wire::read_name(self.data(), self.size(), 12, out), 0u);
    std::vector<uint8_t> loop(12, 0);  // a label, then a pointer back to it: a loop through the label
    loop.insert(loop.end(), {1, 'a', 0xc0, 12});
    EXPECT_EQ(wire::read_name(loop.data(), loop.size(), 12, out), 0u);
    std::vector<uint8_t> longer(12, 0);
    for (int i = 0; i < 5; ++i) {
        longer.push_back(63);
        longer.insert(longer.end(), 63, 'x');
    }
    longer.push_back(0);
    EXPECT_EQ(wire::read_name(longer.data(), longer.size(), 12, out), 0u);
    std::vector<uint8_t> cut(12, 0);
    cut.insert(cut.end(), {5, 'a', 'b'});
    EXPECT_EQ(wire::read_name(cut.data(), cut.size(), 12, out), 0u);
}

// A server on loopback of the test's own: UDP answers `udp_reply` (its id set from the query's), and a TCP
// listener on the same port answers `tcp_reply` framed. Counts what it was asked.
class TinyServer {
public:
    TinyServer(std::vector<uint8_t> udp_reply, std::vector<uint8_t> tcp_reply)
        : udp_reply_(std::move(udp_reply)), tcp_reply_(std::move(tcp_reply)) {
        // The kernel picks the UDP port; the same number over TCP may be held by another test's socket
        // (ctest -j), so a pair that will not bind is dropped and another tried, a bounded number of times.
        for (int attempt = 0; attempt < 50 && port_ == 0; ++attempt) {
            sockaddr_in a{};
            a.sin_family = AF_INET;
            a.sin_addr.s_addr = htonl(0x7f000001);
            udp_ = Fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
            if (::bind(udp_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) continue;
            socklen_t l = sizeof a;
            ::getsockname(udp_.get(), reinterpret_cast<sockaddr*>(&a), &l);
            tcp_ = Fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
            int one = 1;
            ::setsockopt(tcp_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
            if (::bind(tcp_.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) port_ = ntohs(a.sin_port);
        }
        EXPECT_NE(port_, 0) << "no port free over both UDP and TCP in 50 tries";
        ::listen(tcp_.get(), 4);
        thread_ = std::thread([this] { run(); });
    }
    ~TinyServer() {
        stop_ = true;
        thread_.join();
    }
    [[nodiscard]] SocketAddress where() const { return SocketAddress{test::address_of("127.0.0.1"), port_}; }
    std::atomic<int> udp_asked{0}, tcp_asked{0};

private:
    void run() {
        while (!stop_) {
            pollfd p[2] = {{udp_.get(), POLLIN, 0}, {tcp_.get(), POLLIN, 0}};
            if (::poll(p, 2, 20) <= 0) continue;
            uint8_t buf[512];
            if (p[0].revents & POLLIN) {
                sockaddr_storage from{};
                socklen_t fl = sizeof from;
                ssize_t n = ::recvfrom(udp_.get(), buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &fl);
                ++udp_asked;
                if (n >= 2 && !udp_reply_.empty()) {
                    auto r = udp_reply_;
                    r[0] = buf[0], r[1] = buf[1];
                    ::sendto(udp_.get(), r.data(), r.size(), 0, reinterpret_cast<sockaddr*>(&from), fl);
                }
            }
            if (p[1].revents & POLLIN) {
                Fd c(::accept(tcp_.get(), nullptr, nullptr));
                uint8_t len[2];
                ssize_t n = ::recv(c.get(), len, 2, MSG_WAITALL);
                ssize_t q = n == 2 ? ::recv(c.get(), buf, wire::get16(len), MSG_WAITALL) : 0;
                ++tcp_asked;
                if (q >= 2) {
                    auto r = tcp_reply_;
                    r[0] = buf[0], r[1] = buf[1];
                    std::vector<uint8_t> framed{static_cast<uint8_t>(r.size() >> 8), static_cast<uint8_t>(r.size())};
                    framed.insert(framed.end(), r.begin(), r.end());
                    ::send(c.get(), framed.data(), framed.size(), MSG_NOSIGNAL);
                }
            }
        }
    }
    std::vector<uint8_t> udp_reply_, tcp_reply_;
    Fd udp_, tcp_;
    uint16_t port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

std::vector<uint8_t> response(uint16_t flags, uint8_t marker) {  // a header, no question; `marker` in arcount
    return {0, 0, static_cast<uint8_t>(flags >> 8), static_cast<uint8_t>(flags), 0, 0, 0, 0, 0, 0, 0, marker};
}

TEST(DnsAsk, UdpThenTcpWhenTruncatedAndSilenceSaysSo) {
    wire::QueryOptions o;
    o.id = 0x1111;
    auto query = wire::make_query(*wire::name_to_wire("example.com"), wire::type::DS, o);
    {
        TinyServer s(response(wire::flag::QR | wire::flag::AA, 1), response(wire::flag::QR, 2));
        auto a = dns_ask(s.where(), query, 2000);
        ASSERT_TRUE(a) << a.error();
        EXPECT_EQ((*a)[11], 1);  // the UDP answer
        EXPECT_EQ(wire::get16(a->data()), 0x1111);
        EXPECT_EQ(s.tcp_asked.load(), 0);
    }
    {
        TinyServer s(response(wire::flag::QR | wire::flag::TC, 1), response(wire::flag::QR | wire::flag::AA, 2));
        auto a = dns_ask(s.where(), query, 2000);
        ASSERT_TRUE(a) << a.error();
        EXPECT_EQ((*a)[11], 2);  // asked again over TCP
        EXPECT_EQ(s.udp_asked.load(), 1);
        EXPECT_EQ(s.tcp_asked.load(), 1);
    }
    {
        TinyServer s({}, {});
        auto a = dns_ask(s.where(), query, 200);
        ASSERT_FALSE(a);
        EXPECT_EQ(a.error(), "no answer in 200 ms");
    }
}

}  // namespace
