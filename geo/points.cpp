#include "geo/points.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "geo/geo.hpp"

namespace glbd::geo {
namespace {

struct CodePoint {
    const char* code;
    float lat, lon;
};
#include "geo/points_table.inc"

struct Keyed {
    uint64_t key;
    Point point;
};

// The country table by code_key, sorted once, so a query finds a point with a binary search.
template <size_t N>
std::array<Keyed, N> keyed(const CodePoint (&table)[N]) {
    std::array<Keyed, N> out{};
    for (size_t i = 0; i < N; ++i) out[i] = Keyed{code_key(table[i].code), Point{table[i].lat, table[i].lon}};
    std::sort(out.begin(), out.end(), [](const Keyed& a, const Keyed& b) { return a.key < b.key; });
    return out;
}

template <size_t N>
bool find(const std::array<Keyed, N>& table, uint64_t key, Point& out) {
    auto it = std::lower_bound(table.begin(), table.end(), key, [](const Keyed& k, uint64_t v) { return k.key < v; });
    if (it == table.end() || it->key != key) return false;
    out = it->point;
    return true;
}

const auto& countries() {
    static const auto table = keyed(kCountryPoints);
    return table;
}
const auto& continents() {
    static const auto table = keyed(kContinentPoints);
    return table;
}

}  // namespace

bool country_point(uint64_t key, Point& out) { return find(countries(), key, out); }

bool continent_point(std::string_view continent, Point& out) {
    return continent.size() == 2 && find(continents(), code_key(continent), out);
}

bool point_of(std::string_view code, Point& out) {
    if (code.size() == 6 && code.substr(0, 4) == "GEO-") return continent_point(code.substr(4), out);
    return code.size() == 2 && country_point(code_key(code), out);
}

double distance_km(Point a, Point b) {
    constexpr double kRad = 3.14159265358979323846 / 180, kEarthKm = 6371.0;
    double dlat = (b.lat - a.lat) * kRad, dlon = (b.lon - a.lon) * kRad;
    double h = std::sin(dlat / 2) * std::sin(dlat / 2) +
               std::cos(a.lat * kRad) * std::cos(b.lat * kRad) * std::sin(dlon / 2) * std::sin(dlon / 2);
    return 2 * kEarthKm * std::asin(std::min(1.0, std::sqrt(h)));
}

}  // namespace glbd::geo
