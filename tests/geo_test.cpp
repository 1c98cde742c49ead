// geo/: networks and MaxMind DB lookups, prefixes, mapped addresses, bad databases.
#include <gtest/gtest.h>

#include <fstream>

#include "geo/geo.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

geo::Address addr(const char* text) { return test::address_of(text); }

const std::string kDb = test::fixture_path("test.mmdb");

TEST(Geo, Ipv4CountryAndContinentFromDatabase) {
    geo::GeoDb db(kDb, {});
    auto l = db.locate(addr("10.2.3.4"));
    EXPECT_EQ(l.code, "AU");
    EXPECT_EQ(l.continent, "OC");
    EXPECT_EQ(l.prefix, 16);
    auto de = db.locate(addr("10.4.0.77"));
    EXPECT_EQ(de.code, "DE");
    EXPECT_EQ(de.continent, "EU");
    EXPECT_EQ(de.prefix, 24);
}

TEST(Geo, Ipv6FromDatabaseWithItsPrefix) {
    geo::GeoDb db(kDb, {});
    auto au = db.locate(addr("2001:db8:2::1"));
    EXPECT_EQ(au.code, "AU");
    EXPECT_EQ(au.prefix, 48);
    auto fr = db.locate(addr("2001:db8:4:ff::1"));
    EXPECT_EQ(fr.code, "FR");
    EXPECT_EQ(fr.prefix, 56);
}

TEST(Geo, MappedAddressIsLookedUpAsIpv4) {
    geo::GeoDb db(kDb, {});
    auto a = addr("::ffff:10.1.2.3");
    a.unmap();
    EXPECT_EQ(a.family, 4);
    auto l = db.locate(a);
    EXPECT_EQ(l.code, "IE");
    EXPECT_EQ(l.prefix, 16);
}

TEST(Geo, MappedSubnetPrefixBecomesIpv4Length) {
    auto a = addr("::ffff:10.1.0.0");
    uint8_t prefix = 112;
    a.unmap(&prefix);
    EXPECT_EQ(a.family, 4);
    EXPECT_EQ(prefix, 16);
    auto b = addr("::ffff:10.1.0.0");
    uint8_t shorter = 64;  // covers more than the mapped range: stays IPv6
    b.unmap(&shorter);
    EXPECT_EQ(b.family, 6);
}

TEST(Geo, NetworksOverrideTheDatabase) {
    geo::GeoDb db(kDb, test::networks_of({{"10.1.0.0/16", "dc-x"}, {"2001:db8:2::/64", "GEO-OC"}}));
    auto l = db.locate(addr("10.1.200.1"));
    EXPECT_EQ(l.code, "dc-x");
    EXPECT_EQ(l.prefix, 16);
    auto v6 = db.locate(addr("2001:db8:2::9"));
    EXPECT_EQ(v6.code, "GEO-OC");
    EXPECT_EQ(v6.prefix, 64);
    // Outside the override the database still answers.
    EXPECT_EQ(db.locate(addr("2001:db8:2:1::9")).code, "AU");
}

TEST(Geo, LongestNetworkWinsAndScopeCoversOnlyTheSameAnswer) {
    geo::GeoDb db("", test::networks_of({{"10.0.0.0/8", "wide"}, {"10.1.0.0/16", "narrow"}}));
    auto n = db.locate(addr("10.1.2.3"));
    EXPECT_EQ(n.code, "narrow");
    EXPECT_EQ(n.prefix, 16);
    // 10.2.x is in the /8 but shares 14 leading bits with 10.1/16: the answer holds for the /15.
    auto w = db.locate(addr("10.2.0.1"));
    EXPECT_EQ(w.code, "wide");
    EXPECT_EQ(w.prefix, 15);
    auto far = db.locate(addr("10.200.0.1"));
    EXPECT_EQ(far.code, "wide");
    EXPECT_EQ(far.prefix, 9);
}

TEST(Geo, UnknownAddressHasNoCode) {
    geo::GeoDb db(kDb, {});
    auto l = db.locate(addr("10.9.9.9"));
    EXPECT_TRUE(l.code.empty());
    EXPECT_TRUE(l.continent.empty());
    EXPECT_GT(l.prefix, 0);
    EXPECT_LE(l.prefix, 32);
    geo::GeoDb none("", {});
    EXPECT_TRUE(none.locate(addr("10.1.2.3")).code.empty());
    EXPECT_EQ(none.locate(addr("10.1.2.3")).prefix, 0);
}

TEST(Geo, MissingDatabaseIsAnError) {
    try {
        geo::GeoDb db("/nonexistent/geo.mmdb", {});
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_NE(std::string(e.what()).find("/nonexistent/geo.mmdb"), std::string::npos) << e.what();
    }
}

TEST(Geo, CorruptDatabaseIsAnError) {
    test::TempDir dir;
    std::string path = dir / "corrupt.mmdb";
    {
        std::ofstream f(path, std::ios::binary);
        f << std::string(4096, '\x5a');
    }
    EXPECT_THROW(geo::GeoDb(path, {}), std::runtime_error);
    // Truncated: the first half of a valid database.
    std::ifstream in(kDb, std::ios::binary);
    std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    {
        std::ofstream f(path, std::ios::binary);
        f << good.substr(0, good.size() / 2);
    }
    EXPECT_THROW(geo::GeoDb(path, {}), std::runtime_error);
}

}  // namespace
