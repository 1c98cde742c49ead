// geo/points — a representative point on the globe for each geo code, and great-circle distances: what the
// nearest-cluster fallback (geoip.fallback: nearest) measures with. The table is generated from data Debian
// ships (geo/tools/make-points.py says how); lookups are binary searches with no allocation.
#pragma once

#include <cstdint>
#include <string_view>

namespace glbd::geo {

struct Point {
    float lat = 0, lon = 0;  // degrees
};

// The point of a country code ("IE") or of a continent ("GEO-EU", or its two letters "EU" with
// `continent` set); false for a code with none (a custom geoip.networks code, an unknown code).
bool point_of(std::string_view code, Point& out);
bool continent_point(std::string_view continent, Point& out);
// By a code's key (geo::code_key), for the query path: the country's point, if any.
bool country_point(uint64_t code_key, Point& out);

// Great-circle distance in kilometres (haversine, mean Earth radius 6371 km).
double distance_km(Point a, Point b);

}  // namespace glbd::geo
