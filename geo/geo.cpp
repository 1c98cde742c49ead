#include "geo/geo.hpp"

#include "geo/location_db.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>

namespace glbd::geo {
namespace {
constexpr uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

// The 128-bit key the trie is walked with; IPv4 maps to ::ffff:a.b.c.d.
std::array<uint8_t, 16> key_of(const Address& a) {
    std::array<uint8_t, 16> k{};
    if (a.family == 4) {
        std::memcpy(k.data(), kMapped, 12);
        std::memcpy(k.data() + 12, a.bytes.data(), 4);
    } else {
        k = a.bytes;
    }
    return k;
}
inline int bit_at(const std::array<uint8_t, 16>& k, unsigned i) { return (k[i / 8] >> (7 - i % 8)) & 1; }
}  // namespace

GeoDb::GeoDb(const std::string& database, const std::vector<Network>& networks, const DatabaseOptions& options)
    : database_(database) {
    static std::atomic<uint64_t> next_id{1};
    id_ = next_id.fetch_add(1);
    trie_.emplace_back();
    for (const auto& n : networks) {
        const Address& a = n.prefix.address;
        codes_.push_back(n.code);
        insert(a, a.family == 4 ? n.prefix.length + 96u : n.prefix.length, static_cast<int32_t>(codes_.size() - 1));
    }
    if (!database.empty() && is_location_db(database)) {
        loc_ = std::make_unique<const LocationDb>(database, options.verify, options.signing_key);
    } else if (!database.empty()) {
        if (options.verify) {
            throw std::runtime_error("geoip.verify: \"" + database +
                                     "\" is not a location (libloc) database; only those carry a signature");
        }
        int rc = MMDB_open(database.c_str(), MMDB_MODE_MMAP, &mmdb_);
        if (rc != MMDB_SUCCESS) {
            throw std::runtime_error("geoip.database: cannot open \"" + database + "\": " + MMDB_strerror(rc));
        }
        has_mmdb_ = true;
    }
}

GeoDb::~GeoDb() {
    if (has_mmdb_) MMDB_close(&mmdb_);
}

std::string GeoDb::describe() const {
    auto date = [](std::time_t t) {
        char buf[32];
        std::tm tm{};
        gmtime_r(&t, &tm);
        std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
        return std::string(buf);
    };
    std::string nets = std::to_string(codes_.size()) + " network(s) of geoip.networks";
    if (loc_) {
        char mb[32];
        std::snprintf(mb, sizeof mb, "%.1f", static_cast<double>(loc_->bytes()) / (1 << 20));
        return "location (libloc) database " + database_ + " from " + (loc_->vendor().empty() ? "?" : loc_->vendor()) +
               ", created " + date(loc_->created_at()) + ": " + std::to_string(loc_->networks()) + " networks in " +
               std::to_string(loc_->ranges()) + " ranges (" + mb + " MB), signature " +
               (loc_->verified() ? "verified" : "not checked (geoip.verify: false)") + "; " + nets;
    }
    if (has_mmdb_) {
        return std::string("MaxMind DB ") + database_ + " (" +
               (mmdb_.metadata.database_type ? mmdb_.metadata.database_type : "?") + ", built " +
               date(static_cast<std::time_t>(mmdb_.metadata.build_epoch)) + "); " + nets;
    }
    return "no database; " + nets;
}

void GeoDb::insert(const Address& a, unsigned prefix, int32_t code) {
    auto k = key_of(a);
    int32_t node = 0;
    for (unsigned i = 0; i < prefix; ++i) {
        int b = bit_at(k, i);
        if (trie_[node].child[b] < 0) {
            trie_[node].child[b] = static_cast<int32_t>(trie_.size());
            trie_.emplace_back();
        }
        node = trie_[node].child[b];
    }
    trie_[node].code = code;
}

Location GeoDb::locate(const Address& addr) const noexcept {
    struct Cached {
        uint64_t db = 0;
        uint64_t lo = 0, hi = 0;
        uint8_t family = 0;
        Location loc;
    };
    thread_local std::array<Cached, 512> cache{};
    uint64_t lo, hi;
    std::memcpy(&lo, addr.bytes.data(), 8);
    std::memcpy(&hi, addr.bytes.data() + 8, 8);
    uint64_t h = (lo ^ (hi * 0x9e3779b97f4a7c15ULL) ^ addr.family) * 0xff51afd7ed558ccdULL;
    Cached& slot = cache[h >> 55];
    if (slot.db == id_ && slot.lo == lo && slot.hi == hi && slot.family == addr.family) return slot.loc;
    Location loc = locate_uncached(addr);
    loc.code_key = code_key(loc.code);
    loc.continent_key = code_key(loc.continent);
    slot = Cached{id_, lo, hi, addr.family, loc};
    return loc;
}

Location GeoDb::locate_uncached(const Address& addr) const noexcept {
    Location loc;
    const unsigned offset = addr.family == 4 ? 96 : 0;  // trie depth of the address's first bit
    // Walk the trie: remember the deepest network that contains the address, and how deep the walk
    // went, since every address sharing the walked bits gets the same result (the "homogeneous" prefix).
    auto k = key_of(addr);
    int32_t node = 0;
    unsigned depth = 0;
    int32_t best = trie_[0].code;
    unsigned best_depth = 0;
    while (depth < 128) {
        int32_t next = trie_[node].child[bit_at(k, depth)];
        if (next < 0) break;
        node = next;
        ++depth;
        if (trie_[node].code >= 0) best = trie_[node].code, best_depth = depth;
    }
    const Node& stop = trie_[node];
    unsigned homogeneous = depth;
    if (depth < 128 && (stop.child[0] >= 0 || stop.child[1] >= 0)) homogeneous = depth + 1;
    auto family_len = [&](unsigned trie_len) -> uint8_t {
        return static_cast<uint8_t>(trie_len > offset ? trie_len - offset : 0);
    };
    if (best >= 0) {
        loc.code = codes_[static_cast<size_t>(best)];
        loc.source = Location::Source::networks;
        loc.prefix = family_len(std::max(best_depth, homogeneous));
        return loc;
    }
    uint8_t trie_prefix = family_len(homogeneous);
    loc.prefix = trie_prefix;
    if (loc_) {
        auto hit = loc_->lookup(addr);
        loc.prefix = std::max(trie_prefix, hit.prefix);
        if (hit.country >= 0) {
            loc.code = loc_->code(hit.country);
            loc.source = Location::Source::location_db;
            loc.continent = loc_->continent(hit.country);
        }
        return loc;
    }
    return has_mmdb_ ? locate_mmdb(addr, trie_prefix, loc) : loc;
}

// The MaxMind database's answer for what the trie did not place; `loc` holds the trie's prefix.
Location GeoDb::locate_mmdb(const Address& addr, uint8_t trie_prefix, Location loc) const noexcept {
    sockaddr_storage ss{};
    addr.to_sockaddr(0, ss);
    int err = 0;
    MMDB_lookup_result_s res =
        MMDB_lookup_sockaddr(const_cast<MMDB_s*>(&mmdb_), reinterpret_cast<const sockaddr*>(&ss), &err);
    if (err != MMDB_SUCCESS) return loc;
    unsigned netmask = res.netmask;
    if (addr.family == 4 && mmdb_.metadata.ip_version == 6) netmask = netmask >= 96 ? netmask - 96 : 0;
    loc.prefix = std::max<uint8_t>(trie_prefix, static_cast<uint8_t>(netmask));
    if (!res.found_entry) return loc;
    // The record's data offset names it: remember its country and continent per thread, so the map
    // walks of MMDB_get_value run once per record rather than once per query.
    struct Cached {
        uint64_t db;
        uint32_t offset;
        std::string_view code, continent;
        bool has_coordinates;
        float lat, lon;
    };
    thread_local std::array<Cached, 256> cache{};
    Cached& slot = cache[(res.entry.offset * 2654435761u) >> 24 & 0xff];
    loc.source = Location::Source::maxmind;
    if (slot.db == id_ && slot.offset == res.entry.offset) {
        loc.code = slot.code;
        loc.continent = slot.continent;
        loc.has_coordinates = slot.has_coordinates, loc.lat = slot.lat, loc.lon = slot.lon;
        return loc;
    }
    MMDB_entry_data_s data;
    if (MMDB_get_value(&res.entry, &data, "country", "iso_code", nullptr) == MMDB_SUCCESS && data.has_data &&
        data.type == MMDB_DATA_TYPE_UTF8_STRING) {
        loc.code = std::string_view(data.utf8_string, data.data_size);
    }
    if (MMDB_get_value(&res.entry, &data, "continent", "code", nullptr) == MMDB_SUCCESS && data.has_data &&
        data.type == MMDB_DATA_TYPE_UTF8_STRING) {
        loc.continent = std::string_view(data.utf8_string, data.data_size);
    }
    double lat = 0, lon = 0;
    if (MMDB_get_value(&res.entry, &data, "location", "latitude", nullptr) == MMDB_SUCCESS && data.has_data &&
        data.type == MMDB_DATA_TYPE_DOUBLE && (lat = data.double_value) >= -90 && lat <= 90 &&
        MMDB_get_value(&res.entry, &data, "location", "longitude", nullptr) == MMDB_SUCCESS && data.has_data &&
        data.type == MMDB_DATA_TYPE_DOUBLE && (lon = data.double_value) >= -180 && lon <= 180) {
        loc.has_coordinates = true, loc.lat = static_cast<float>(lat), loc.lon = static_cast<float>(lon);
    }
    slot = Cached{id_, res.entry.offset, loc.code, loc.continent, loc.has_coordinates, loc.lat, loc.lon};
    return loc;
}

}  // namespace glbd::geo
