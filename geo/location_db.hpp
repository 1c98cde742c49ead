// geo/location_db — the IPFire location database (libloc, Debian's libloc-database) read once at load
// into flat sorted address ranges, so that a lookup is a binary search: no allocation, no lock, no libloc
// call per query (libloc's own lookup allocates a network object and reference-counts its context without
// atomics, so it may not be called from several query threads).
#pragma once

#include <array>
#include <cstdint>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/base/address.hpp"

namespace glbd::geo {

// Whether the file starts with libloc's magic ("LOCDBXX").
bool is_location_db(const std::string& path);

class LocationDb {
public:
    // Reads the whole database; with `verify`, first checks its signature with the PEM public key at
    // `key_path` (the distribution's: /var/lib/location/signing-key.pem). Throws std::runtime_error naming
    // the file and the problem (unreadable, damaged, unsigned or badly signed).
    LocationDb(const std::string& path, bool verify, const std::string& key_path);

    struct Hit {
        int32_t country = -1;  // index for code() and continent(); -1: no country known
        uint8_t prefix = 0;    // the longest block around the address with the same answer (the ECS scope)
    };
    [[nodiscard]] Hit lookup(const Address& a) const noexcept;
    [[nodiscard]] std::string_view code(int32_t i) const { return codes_[static_cast<size_t>(i)]; }
    [[nodiscard]] std::string_view continent(int32_t i) const { return continents_[static_cast<size_t>(i)]; }

    [[nodiscard]] size_t ranges() const { return v4_start_.size() + v6_start_.size(); }
    [[nodiscard]] size_t networks() const { return networks_; }
    [[nodiscard]] size_t bytes() const;
    [[nodiscard]] std::time_t created_at() const { return created_at_; }
    [[nodiscard]] const std::string& vendor() const { return vendor_; }
    [[nodiscard]] bool verified() const { return verified_; }

    __extension__ typedef unsigned __int128 U128;  // NOLINT(modernize-use-using): __extension__ wants a typedef

private:
    // Each family's address space as ranges: range i runs from start[i] to start[i + 1] - 1 (the last to
    // the end of the space), with one country index (or -1). Adjacent ranges differ in country.
    std::vector<uint32_t> v4_start_;
    std::vector<int16_t> v4_country_;
    std::vector<std::array<uint64_t, 2>> v6_start_;  // {high, low} 64 bits
    std::vector<int16_t> v6_country_;
    std::vector<std::string> codes_, continents_;
    size_t networks_ = 0;
    std::time_t created_at_ = 0;
    std::string vendor_;
    bool verified_ = false;
};

}  // namespace glbd::geo
