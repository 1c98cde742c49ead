// The location (libloc) database as geoip.database. Small databases are written here with libloc's own
// writer (unsigned, or signed with a key made for the test); the real one is Debian's libloc-database, and
// libloc's own lookup is the oracle that glbd's flattened table must agree with.
#include <gtest/gtest.h>

extern "C" {
#include <libloc/database.h>
#include <libloc/libloc.h>
#include <libloc/network.h>
#include <libloc/writer.h>
}

#include <arpa/inet.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "geo/geo.hpp"
#include "geo/location_db.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

const std::string kRealDb = "/var/lib/location/database.db";
const std::string kDistributionKey = "/var/lib/location/signing-key.pem";

using Dir = test::TempDir;

// Writes a small database; signed with `private_key` (a PEM file) when given. In a child process: libloc
// 0.9.16's writer leaks its country objects (LeakSanitizer sees four), which is the writer's, not glbd's,
// and a child that ends with _exit is not checked for leaks.
int write_db_child(const std::string& out, const std::string& private_key) {
    loc_ctx* ctx = nullptr;
    if (loc_new(&ctx) != 0) return 1;
    FILE* key = private_key.empty() ? nullptr : std::fopen(private_key.c_str(), "r");
    loc_writer* w = nullptr;
    if (loc_writer_new(ctx, &w, key, nullptr) != 0) return 2;
    loc_writer_set_vendor(w, "glbd tests");
    const std::pair<const char*, const char*> countries[] = {{"IE", "EU"}, {"FR", "EU"}, {"AU", "OC"}, {"US", "NA"}};
    for (auto [code, continent] : countries) {
        loc_country* c = nullptr;
        if (loc_writer_add_country(w, &c, code) != 0) return 3;
        loc_country_set_continent_code(c, continent);
        loc_country_unref(c);
    }
    const std::pair<const char*, const char*> networks[] = {
        {"10.1.0.0/16", "IE"},     {"10.1.5.0/24", "FR"},     {"10.2.0.0/16", "AU"}, {"10.3.0.0/16", "US"},
        {"2001:db8:1::/48", "IE"}, {"2001:db8:2::/48", "AU"}, {"10.4.0.0/16", ""}};
    for (auto [net, code] : networks) {
        loc_network* n = nullptr;
        if (loc_writer_add_network(w, &n, net) != 0) return 4;
        if (*code) loc_network_set_country_code(n, code);
        loc_network_unref(n);
    }
    FILE* f = std::fopen(out.c_str(), "w+");  // the writer reads its header back to sign it
    if (!f || loc_writer_write(w, f, LOC_DATABASE_VERSION_UNSET) != 0) return 5;
    std::fclose(f);
    if (key) std::fclose(key);
    loc_writer_unref(w);
    loc_unref(ctx);
    return 0;
}

void write_db(const std::string& out, const std::string& private_key = "") {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) _exit(write_db_child(out, private_key));
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writing " << out << ": status " << status;
}

std::string make_key(const Dir& d) {
    std::string priv = d / "key.pem", pub = d / "pub.pem";
    std::string cmd = "openssl ecparam -genkey -name secp521r1 -noout -out " + priv +
                      " 2>/dev/null && openssl ec -in " + priv + " -pubout -out " + pub + " 2>/dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
    return priv;
}

struct Seen {
    std::string code, continent;
    int prefix;
};
Seen locate(const geo::GeoDb& db, const char* ip) {
    auto l = db.locate(test::address_of(ip));
    return {std::string(l.code), std::string(l.continent), l.prefix};
}

TEST(LocationDb, DetectedByItsHeader) {
    Dir d;
    write_db(d / "small.db");
    EXPECT_TRUE(geo::is_location_db(d / "small.db"));
    EXPECT_FALSE(geo::is_location_db(test::fixture_path("test.mmdb")));
    EXPECT_FALSE(geo::is_location_db(d / "missing.db"));
}

// Countries, continents and scopes from a small database: a nested network cuts its parent, and the scope
// is the largest block around the client that gets the same answer.
TEST(LocationDb, CountryContinentAndScope) {
    Dir d;
    write_db(d / "small.db");
    geo::GeoDb db(d / "small.db", {});
    auto ie = locate(db, "10.1.0.1");
    EXPECT_EQ(ie.code, "IE");
    EXPECT_EQ(ie.continent, "EU");
    EXPECT_EQ(ie.prefix, 22);  // 10.1.0.0/22 is IE; 10.1.4.0/22 holds the FR /24
    auto fr = locate(db, "10.1.5.9");
    EXPECT_EQ(fr.code, "FR");
    EXPECT_EQ(fr.prefix, 24);
    EXPECT_EQ(locate(db, "10.1.6.1").prefix, 23);    // 10.1.6.0/23, after the FR /24
    EXPECT_EQ(locate(db, "10.1.200.1").prefix, 17);  // 10.1.128.0/17
    EXPECT_EQ(locate(db, "10.2.3.4").continent, "OC");
    EXPECT_EQ(locate(db, "10.3.3.4").continent, "NA");
    // A network without a country is as unknown as the empty space after it: 10.4.0.0/14 answers alike.
    auto nocountry = locate(db, "10.4.0.1");
    EXPECT_EQ(nocountry.code, "");
    EXPECT_EQ(nocountry.prefix, 14);
    auto v6 = locate(db, "2001:db8:1::42");
    EXPECT_EQ(v6.code, "IE");
    EXPECT_EQ(v6.prefix, 48);
    EXPECT_EQ(locate(db, "2001:db8:2:ffff::1").code, "AU");
    auto outside = locate(db, "192.0.2.1");  // in no network: unknown, the scope of the empty block
    EXPECT_EQ(outside.code, "");
    EXPECT_EQ(outside.prefix, 1);                  // 128.0.0.0/1 holds no network of this database
    EXPECT_EQ(locate(db, "10.0.0.1").prefix, 16);  // 10.0.0.0/16 is empty, 10.1.0.0/16 is not
}

TEST(LocationDb, NetworksOfTheConfigWin) {
    Dir d;
    write_db(d / "small.db");
    geo::GeoDb db(d / "small.db", test::networks_of({{"10.1.5.0/25", "dc-north"}}));
    EXPECT_EQ(locate(db, "10.1.5.1").code, "dc-north");
    EXPECT_EQ(locate(db, "10.1.5.200").code, "FR");
    EXPECT_EQ(locate(db, "10.1.5.200").prefix, 25);
}

TEST(LocationDb, SignatureVerifiedUnsignedAndForeignKeysRefused) {
    Dir d;
    std::string priv = make_key(d);
    write_db(d / "signed.db", priv);
    write_db(d / "unsigned.db");
    geo::DatabaseOptions own{true, d / "pub.pem"};
    EXPECT_NO_THROW(geo::GeoDb(d / "signed.db", {}, own));
    EXPECT_NO_THROW(geo::GeoDb(d / "unsigned.db", {}));  // verify off: loaded
    try {
        geo::GeoDb(d / "unsigned.db", {}, own);
        ADD_FAILURE() << "an unsigned database was accepted";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("signature does not verify"), std::string::npos) << e.what();
    }
    // Signed, but not by the key we trust (the distribution's).
    EXPECT_THROW(geo::GeoDb(d / "signed.db", {}, geo::DatabaseOptions{true, kDistributionKey}), std::runtime_error);
    // Tampered with after signing: one byte of its data changed.
    std::string bytes;
    {
        std::ifstream in(d / "signed.db", std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    auto at = bytes.find("glbd tests");
    ASSERT_NE(at, std::string::npos);
    bytes[at] = 'G';
    std::ofstream(d / "tampered.db", std::ios::binary) << bytes;
    EXPECT_THROW(geo::GeoDb(d / "tampered.db", {}, own), std::runtime_error);
    // A MaxMind DB cannot be verified: asking for it is an error, not a silent pass.
    EXPECT_THROW(geo::GeoDb(test::fixture_path("test.mmdb"), {}, own), std::runtime_error);
}

TEST(LocationDb, DamagedFilesAreRefusedWithAMessage) {
    Dir d;
    write_db(d / "small.db");
    std::string bytes;
    {
        std::ifstream in(d / "small.db", std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    for (size_t cut : {size_t{7}, size_t{16}, size_t{64}, bytes.size() / 2, bytes.size() - 1}) {
        std::ofstream(d / "cut.db", std::ios::binary | std::ios::trunc) << bytes.substr(0, cut);
        try {
            geo::GeoDb db(d / "cut.db", {});
            // libloc may read a cut file that still holds every section; then it must answer sanely.
            (void)db.locate(test::address_of("10.1.0.1"));
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("cut.db"), std::string::npos) << e.what();
        }
    }
}

// Debian's database: well-known, stable networks of the regional registries and root-server operators.
class RealDb : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        ASSERT_TRUE(std::filesystem::exists(kRealDb)) << kRealDb << " is missing: apt-get install libloc-database";
        db_ = new geo::GeoDb(kRealDb, {}, geo::DatabaseOptions{true, kDistributionKey});
    }
    static void TearDownTestSuite() { delete db_; }
    static geo::GeoDb* db_;
};
geo::GeoDb* RealDb::db_ = nullptr;

TEST_F(RealDb, WellKnownNetworks) {
    struct Case {
        const char* ip;
        const char* code;
        const char* continent;
        int max_prefix;  // the registered network; the scope may be shorter when its neighbours agree
    };
    const Case cases[] = {
        {"193.0.0.1", "NL", "EU", 21},        // RIPE NCC
        {"2001:67c:2e8::1", "NL", "EU", 48},  // RIPE NCC
        {"198.41.0.4", "US", "NA", 24},       // a.root-servers.net (Verisign)
        {"202.12.27.33", "JP", "AS", 24},     // m.root-servers.net (WIDE)
        {"2001:dc3::35", "JP", "AS", 32},     // m.root-servers.net over IPv6
        {"200.3.14.10", "UY", "SA", 22},      // LACNIC
        {"203.119.101.61", "AU", "OC", 22},   // APNIC
        {"196.216.2.1", "ZA", "AF", 23},      // AFRINIC
    };
    for (const auto& c : cases) {
        auto s = locate(*db_, c.ip);
        EXPECT_EQ(s.code, c.code) << c.ip;
        EXPECT_EQ(s.continent, c.continent) << c.ip;
        EXPECT_GT(s.prefix, 0) << c.ip;
        EXPECT_LE(s.prefix, c.max_prefix) << c.ip;
    }
    EXPECT_EQ(locate(*db_, "192.0.2.1").code, "");  // documentation space: nowhere
}

// Random addresses: glbd's table gives the country libloc's own lookup gives, and every address of the
// block it reports as the scope has that same country (checked at both ends of the block).
TEST_F(RealDb, AgreesWithLiblocsOwnLookup) {
    loc_ctx* ctx = nullptr;
    ASSERT_EQ(loc_new(&ctx), 0);
    FILE* f = std::fopen(kRealDb.c_str(), "r");
    loc_database* ldb = nullptr;
    ASSERT_EQ(loc_database_new(ctx, &ldb, f), 0);
    auto oracle = [&](const in6_addr& a) {
        loc_network* n = nullptr;
        std::string code;
        if (loc_database_lookup(ldb, &a, &n) == 0 && n) {
            if (const char* cc = loc_network_get_country_code(n)) code = cc;
            loc_network_unref(n);
        }
        return code;
    };
    std::mt19937_64 rng(20261201);
    int checked = 0;
    for (int i = 0; i < 4000; ++i) {
        bool v4 = i % 2 == 0;
        geo::Address a;
        a.family = v4 ? 4 : 6;
        for (auto& b : a.bytes) b = static_cast<uint8_t>(rng());
        if (v4) {
            std::fill(a.bytes.begin() + 4, a.bytes.end(), 0);
        } else {
            a.bytes[0] = static_cast<uint8_t>(0x20 | (a.bytes[0] & 0x0f));  // 2000::/4, where networks are
        }
        auto mapped = [&](const geo::Address& x) {
            in6_addr m{};
            if (x.family == 4) {
                m.s6_addr[10] = m.s6_addr[11] = 0xff;
                std::memcpy(m.s6_addr + 12, x.bytes.data(), 4);
            } else {
                std::memcpy(m.s6_addr, x.bytes.data(), 16);
            }
            return m;
        };
        auto got = db_->locate(a);
        std::string want = oracle(mapped(a));
        ASSERT_EQ(std::string(got.code), want) << "address " << i;
        // Both ends of the scope block.
        unsigned bits = v4 ? 32 : 128;
        geo::Address lo = a, hi = a;
        for (unsigned b = got.prefix; b < bits; ++b) {
            lo.bytes[b / 8] = static_cast<uint8_t>(lo.bytes[b / 8] & ~(0x80 >> (b % 8)));
            hi.bytes[b / 8] = static_cast<uint8_t>(hi.bytes[b / 8] | (0x80 >> (b % 8)));
        }
        ASSERT_EQ(oracle(mapped(lo)), want) << "address " << i << " scope /" << int(got.prefix);
        ASSERT_EQ(oracle(mapped(hi)), want) << "address " << i << " scope /" << int(got.prefix);
        ++checked;
    }
    EXPECT_EQ(checked, 4000);
    loc_database_unref(ldb);
    std::fclose(f);
    loc_unref(ctx);
}

}  // namespace
