#include "tests/dns_util.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <ldns/ldns.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "geo/geo.hpp"

namespace glbd::test {

namespace {
void put16(std::vector<uint8_t>& b, uint16_t v) {
    b.push_back(static_cast<uint8_t>(v >> 8));
    b.push_back(static_cast<uint8_t>(v));
}
std::vector<std::string> rr_list(ldns_rr_list* l) {
    std::vector<std::string> out;
    for (size_t i = 0; l && i < ldns_rr_list_rr_count(l); ++i) {
        char* s = ldns_rr2str(ldns_rr_list_rr(l, i));
        std::string t = s ? s : "";
        free(s);
        while (!t.empty() && (t.back() == '\n')) t.pop_back();
        for (auto& ch : t) {
            if (ch == '\t') ch = ' ';
        }
        out.push_back(t);
    }
    return out;
}
}  // namespace

std::vector<uint8_t> make_query(const std::string& name, uint16_t qtype, const QueryOpts& o) {
    std::vector<uint8_t> b;
    put16(b, o.id);
    put16(b, static_cast<uint16_t>((o.opcode & 0xf) << 11 | (o.rd ? 0x0100 : 0)));
    put16(b, 1);
    put16(b, 0);
    put16(b, 0);
    put16(b, o.edns ? 1 : 0);
    size_t start = 0;
    std::string n = name;
    if (!n.empty() && n.back() == '.') n.pop_back();
    while (start <= n.size() && !n.empty()) {
        size_t dot = n.find('.', start);
        if (dot == std::string::npos) dot = n.size();
        b.push_back(static_cast<uint8_t>(dot - start));
        b.insert(b.end(), n.begin() + static_cast<long>(start), n.begin() + static_cast<long>(dot));
        start = dot + 1;
    }
    b.push_back(0);
    put16(b, qtype);
    put16(b, o.qclass);
    if (o.edns) {
        b.push_back(0);
        put16(b, 41);
        put16(b, o.payload);
        b.push_back(0);
        b.push_back(o.version);
        put16(b, static_cast<uint16_t>((o.do_bit ? 0x8000 : 0) | (o.co_bit ? 0x4000 : 0)));
        size_t rdlen = (o.ecs ? 4 + o.ecs->size() : 0) + (o.cookie ? 4 + o.cookie->size() : 0);
        put16(b, static_cast<uint16_t>(rdlen));
        if (o.ecs) {
            put16(b, 8);
            put16(b, static_cast<uint16_t>(o.ecs->size()));
            b.insert(b.end(), o.ecs->begin(), o.ecs->end());
        }
        if (o.cookie) {
            put16(b, 10);
            put16(b, static_cast<uint16_t>(o.cookie->size()));
            b.insert(b.end(), o.cookie->begin(), o.cookie->end());
        }
    }
    return b;
}

// Addresses in test inputs come from the C library's inet_pton, never from the code under test.
Endpoint endpoint_of(std::string_view text) {
    auto e = Endpoint::parse(text);
    EXPECT_TRUE(e.has_value()) << "not an endpoint: " << text;
    return e.value_or(Endpoint{});
}

geo::Address address_of(const std::string& text) {
    geo::Address a;
    if (inet_pton(AF_INET, text.c_str(), a.bytes.data()) == 1) {
        a.family = 4;
    } else if (inet_pton(AF_INET6, text.c_str(), a.bytes.data()) == 1) {
        a.family = 6;
    } else {
        throw std::runtime_error("bad address " + text);
    }
    return a;
}

geo::Network network_of(const std::string& cidr, const std::string& code) {
    size_t slash = cidr.find('/');
    if (slash == std::string::npos) throw std::runtime_error("bad network " + cidr);
    geo::Network n;
    n.prefix.address = address_of(cidr.substr(0, slash));
    n.prefix.length = static_cast<uint8_t>(std::stoi(cidr.substr(slash + 1)));
    n.code = code;
    return n;
}

std::vector<geo::Network> networks_of(const std::vector<std::pair<std::string, std::string>>& cidr_code) {
    std::vector<geo::Network> out;
    for (const auto& [cidr, code] : cidr_code) out.push_back(network_of(cidr, code));
    return out;
}

std::vector<uint8_t> ecs_payload(const std::string& subnet, uint8_t scope) {
    auto slash = subnet.find('/');
    geo::Address a = address_of(subnet.substr(0, slash));
    int prefix = std::stoi(subnet.substr(slash + 1));
    std::vector<uint8_t> p;
    put16(p, a.family == 4 ? 1 : 2);
    p.push_back(static_cast<uint8_t>(prefix));
    p.push_back(scope);
    for (int i = 0; i < (prefix + 7) / 8; ++i) p.push_back(a.bytes[static_cast<size_t>(i)]);
    return p;
}

Parsed parse(const uint8_t* data, size_t len) {
    Parsed p;
    p.size = len;
    ldns_pkt* pkt = nullptr;
    if (ldns_wire2pkt(&pkt, data, len) != LDNS_STATUS_OK) return p;
    p.ok = true;
    p.id = ldns_pkt_id(pkt);
    p.qr = ldns_pkt_qr(pkt);
    p.aa = ldns_pkt_aa(pkt);
    p.tc = ldns_pkt_tc(pkt);
    p.rd = ldns_pkt_rd(pkt);
    p.rcode = static_cast<uint8_t>(ldns_pkt_get_rcode(pkt));
    auto q = rr_list(ldns_pkt_question(pkt));
    if (!q.empty()) p.question = q[0];
    p.answer = rr_list(ldns_pkt_answer(pkt));
    p.authority = rr_list(ldns_pkt_authority(pkt));
    p.additional = rr_list(ldns_pkt_additional(pkt));
    if (ldns_pkt_edns(pkt)) {
        p.edns = true;
        p.edns_payload = ldns_pkt_edns_udp_size(pkt);
        p.rcode = static_cast<uint8_t>(p.rcode | (ldns_pkt_edns_extended_rcode(pkt) << 4));
        if (ldns_rdf* d = ldns_pkt_edns_data(pkt)) {
            const uint8_t* o = ldns_rdf_data(d);
            size_t n = ldns_rdf_size(d), i = 0;
            while (i + 4 <= n) {
                uint16_t code = static_cast<uint16_t>(o[i] << 8 | o[i + 1]);
                uint16_t olen = static_cast<uint16_t>(o[i + 2] << 8 | o[i + 3]);
                if (code == 8 && olen >= 4 && i + 4 + olen <= n) {
                    p.ecs = true;
                    p.ecs_family = static_cast<uint16_t>(o[i + 4] << 8 | o[i + 5]);
                    p.ecs_source = o[i + 6];
                    p.ecs_scope = o[i + 7];
                }
                if (code == 10 && i + 4 + olen <= n) p.cookie.assign(o + i + 4, o + i + 4 + olen);
                i += 4 + olen;
            }
        }
    }
    ldns_pkt_free(pkt);
    return p;
}

Parsed ask(const Snapshot& snap, const std::vector<uint8_t>& query, Transport t, const std::string& source,
           QueryInfo* info) {
    Client c;
    c.address = address_of(source);
    c.transport = t;
    std::vector<uint8_t> out(65535);
    size_t n = answer(snap, query.data(), query.size(), c, out.data(), out.size(), info);
    if (n == 0) return Parsed{};
    return parse(out.data(), n);
}

conf::Config config_from(const std::string& yaml) {
    auto r = conf::load_text(yaml, "test.yaml");
    if (!r.config) {
        std::string all;
        for (const auto& e : r.errors) all += e.str() + "\n";
        throw std::runtime_error("test config invalid:\n" + all);
    }
    return *r.config;
}

std::string field(const std::string& rr, int index) {
    std::istringstream in(rr);
    std::string f;
    for (int i = 0; i <= index; ++i) {
        if (!(in >> f)) return "";
    }
    return f;
}

std::vector<std::string> answer_rdata(const Parsed& p) {
    std::vector<std::string> out;
    for (const auto& rr : p.answer) out.push_back(field(rr, 4));
    return out;
}

std::string field(const std::vector<std::string>& section, size_t i, int index) {
    if (i >= section.size()) {
        ADD_FAILURE() << "no record " << i << " in a section of " << section.size();
        return "";
    }
    return field(section[i], index);
}

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit, std::chrono::milliseconds step) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) return done();
        std::this_thread::sleep_for(step);
    }
    return true;
}

TempDir::TempDir() {
    char tmpl[] = "/tmp/glbd-test-XXXXXX";
    if (!mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    path = tmpl;
}
TempDir::~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
}

std::string fixture_path(const std::string& name) { return std::string(GLBD_FIXTURES) + "/" + name; }

}  // namespace glbd::test
