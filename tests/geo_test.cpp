// geo/: networks and MaxMind DB lookups, prefixes, mapped addresses, bad databases; the countries' points.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "geo/geo.hpp"
#include "geo/points.hpp"
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

// Every country's point (geo/points_table.inc) lies near the places tzdata lists for it: within the span of
// its zones' locations (and 1,000 km for a country of one zone). A median across the 180th meridian put New
// Zealand and the US Minor Outlying Islands on the other side of the world.
TEST(Points, EachCountrysPointIsAmongItsZones) {
    std::ifstream tab("/usr/share/zoneinfo/zone.tab");  // tzdata, which .ci/deps installs: the table's source
    ASSERT_TRUE(tab) << "/usr/share/zoneinfo/zone.tab (Debian's tzdata) is needed";
    auto dms = [](const std::string& s, size_t deg) {
        double sign = s[0] == '-' ? -1 : 1;
        double d = std::stod(s.substr(1, deg)), m = std::stod(s.substr(1 + deg, 2));
        double sec = s.size() > 3 + deg ? std::stod(s.substr(3 + deg, 2)) : 0;
        return static_cast<float>(sign * (d + m / 60 + sec / 3600));
    };
    std::map<std::string, std::vector<geo::Point>> zones;
    for (std::string line; std::getline(tab, line);) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream in(line);
        std::string code, coord;
        in >> code >> coord;
        size_t split = coord.find_first_of("+-", 1);
        zones[code].push_back({dms(coord.substr(0, split), 2), dms(coord.substr(split), 3)});
    }
    ASSERT_GT(zones.size(), 200u);
    for (const auto& [code, places] : zones) {
        geo::Point p;
        ASSERT_TRUE(geo::point_of(code, p)) << code;
        double nearest = 1e9, span = 0;
        for (const auto& a : places) {
            nearest = std::min(nearest, geo::distance_km(p, a));
            for (const auto& b : places) span = std::max(span, geo::distance_km(a, b));
        }
        EXPECT_LE(nearest, std::max(1000.0, span)) << code << " at " << p.lat << ", " << p.lon;
    }
}

}  // namespace
