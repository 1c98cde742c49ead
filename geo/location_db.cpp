#include "geo/location_db.hpp"

extern "C" {
#include <libloc/country.h>
#include <libloc/database.h>
#include <libloc/libloc.h>
#include <libloc/network.h>
}

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <stdexcept>

#include "geo/geo.hpp"

namespace glbd::geo {
namespace {

using U128 = LocationDb::U128;

// libloc objects, released when they go out of scope.
template <class T, T* (*Unref)(T*)>
struct Ref {
    T* p = nullptr;
    ~Ref() {
        if (p) Unref(p);
    }
};
struct File {
    FILE* f = nullptr;
    ~File() {
        if (f) std::fclose(f);
    }
};

U128 full(unsigned bits) { return bits == 128 ? ~U128(0) : (U128(1) << bits) - 1; }

unsigned common_prefix(U128 s, U128 e, unsigned bits) {
    U128 x = (s ^ e) & full(bits);
    if (x == 0) return bits;
    auto hi = static_cast<uint64_t>(x >> 64), lo = static_cast<uint64_t>(x);
    unsigned clz = hi ? static_cast<unsigned>(__builtin_clzll(hi)) : 64 + static_cast<unsigned>(__builtin_clzll(lo));
    return clz - (128 - bits);
}

// The shortest prefix length L such that the L-bit block around `a` lies inside [s, e]: every address in it
// gets the same answer, so that is the ECS scope.
uint8_t block_prefix(U128 a, U128 s, U128 e, unsigned bits) {
    for (unsigned len = common_prefix(s, e, bits); len < bits; ++len) {
        U128 mask = len == 0 ? 0 : (full(bits) << (bits - len)) & full(bits);
        U128 lo = a & mask, hi = lo | (~mask & full(bits));
        if (lo >= s && hi <= e) return static_cast<uint8_t>(len);
    }
    return static_cast<uint8_t>(bits);
}

// Networks arrive in address order, each parent before the networks nested in it (libloc's tree walk).
// The output covers the whole address space with ranges: a nested network's range cuts its parent's, and
// neighbours with the same country merge.
class Flattener {
public:
    explicit Flattener(unsigned bits) : bits_(bits) {}
    void add(U128 s, U128 e, int16_t country) {
        if (s < cursor_ || done_) throw std::runtime_error("networks out of order: the database is damaged");
        while (!open_.empty() && open_.back().end < s) close_top();
        if (s > cursor_) emit(open_.empty() ? -1 : open_.back().country), cursor_ = s;
        open_.push_back(Open{e, country});
    }
    std::vector<std::pair<U128, int16_t>> finish() {
        while (!open_.empty()) close_top();
        if (!done_) emit(-1);
        return std::move(out_);
    }

private:
    struct Open {
        U128 end;
        int16_t country;
    };
    void emit(int16_t country) {  // a range from cursor_ on
        if (out_.empty() || out_.back().second != country) out_.emplace_back(cursor_, country);
    }
    void close_top() {
        Open t = open_.back();
        open_.pop_back();
        if (done_ || t.end < cursor_) return;
        emit(t.country);
        if (t.end == full(bits_)) {
            done_ = true;
        } else {
            cursor_ = t.end + 1;
        }
    }
    unsigned bits_;
    U128 cursor_ = 0;
    bool done_ = false;
    std::vector<Open> open_;
    std::vector<std::pair<U128, int16_t>> out_;
};

U128 from_in6(const in6_addr& a, unsigned first, unsigned count) {
    U128 v = 0;
    for (unsigned i = first; i < first + count; ++i) v = v << 8 | a.s6_addr[i];
    return v;
}

}  // namespace

bool is_location_db(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    char magic[7] = {};
    return in.read(magic, sizeof magic) && std::memcmp(magic, "LOCDBXX", sizeof magic) == 0;
}

LocationDb::LocationDb(const std::string& path, bool verify, const std::string& key_path) {
    auto fail = [&](const std::string& why) { return std::runtime_error("geoip.database \"" + path + "\": " + why); };
    Ref<loc_ctx, loc_unref> ctx;
    if (loc_new(&ctx.p) != 0) throw fail("cannot start libloc");
    loc_set_log_fn(
        ctx.p, [](loc_ctx*, int, const char*, int, const char*, const char*, va_list) {});  // errors are ours to report
    File f{std::fopen(path.c_str(), "r")};
    if (!f.f) throw fail(std::strerror(errno));
    Ref<loc_database, loc_database_unref> db;
    if (loc_database_new(ctx.p, &db.p, f.f) != 0 || !db.p) throw fail("not a readable location database (damaged?)");
    if (verify) {
        File key{std::fopen(key_path.c_str(), "r")};
        if (!key.f) throw fail("cannot read the signing key \"" + key_path + "\": " + std::strerror(errno));
        if (loc_database_verify(db.p, key.f) != 0)
            throw fail("its signature does not verify with \"" + key_path + "\" (unsigned or tampered with)");
        verified_ = true;
    }
    created_at_ = loc_database_created_at(db.p);
    if (const char* v = loc_database_get_vendor(db.p)) vendor_ = v;

    // Countries with their continents.
    std::map<std::string, int16_t> index;
    auto country_index = [&](const char* code, const char* continent) -> int16_t {
        if (!code || !*code) return -1;
        auto [it, added] = index.try_emplace(code, static_cast<int16_t>(codes_.size()));
        if (added) {
            if (codes_.size() >= 32767) throw fail("too many country codes");
            codes_.emplace_back(code);
            continents_.emplace_back(continent ? continent : "");
        } else if (continent && *continent && continents_[static_cast<size_t>(it->second)].empty()) {
            continents_[static_cast<size_t>(it->second)] = continent;
        }
        return it->second;
    };
    {
        Ref<loc_database_enumerator, loc_database_enumerator_unref> e;
        if (loc_database_enumerator_new(&e.p, db.p, LOC_DB_ENUMERATE_COUNTRIES, 0) != 0)
            throw fail("cannot list its countries");
        for (;;) {
            Ref<loc_country, loc_country_unref> c;
            if (loc_database_enumerator_next_country(e.p, &c.p) != 0) throw fail("damaged country table");
            if (!c.p) break;
            country_index(loc_country_get_code(c.p), loc_country_get_continent_code(c.p));
        }
    }
    // Networks, flattened per family.
    Flattener v4(32), v6(128);
    {
        Ref<loc_database_enumerator, loc_database_enumerator_unref> e;
        if (loc_database_enumerator_new(&e.p, db.p, LOC_DB_ENUMERATE_NETWORKS, 0) != 0)
            throw fail("cannot list its networks");
        for (;;) {
            Ref<loc_network, loc_network_unref> n;
            if (loc_database_enumerator_next_network(e.p, &n.p) != 0) throw fail("damaged network tree");
            if (!n.p) break;
            const in6_addr* first = loc_network_get_first_address(n.p);
            unsigned prefix = loc_network_prefix(n.p);
            int16_t country = country_index(loc_network_get_country_code(n.p), nullptr);
            bool is4 = loc_network_address_family(n.p) == AF_INET;
            unsigned bits = is4 ? 32 : 128;
            if (!first || prefix > bits) throw fail("damaged network");
            U128 s = is4 ? from_in6(*first, 12, 4) : from_in6(*first, 0, 16);
            U128 e_ = s | (prefix == 0 ? full(bits) : (full(bits) >> prefix));
            (is4 ? v4 : v6).add(s, e_, country);
            ++networks_;
        }
    }
    for (const auto& [s, c] : v4.finish()) v4_start_.push_back(static_cast<uint32_t>(s)), v4_country_.push_back(c);
    for (const auto& [s, c] : v6.finish()) {
        v6_start_.push_back({static_cast<uint64_t>(s >> 64), static_cast<uint64_t>(s)});
        v6_country_.push_back(c);
    }
    if (networks_ == 0) throw fail("holds no networks");
}

LocationDb::Hit LocationDb::lookup(const Address& a) const noexcept {
    if (a.family == 4) {
        uint32_t x = static_cast<uint32_t>(a.bytes[0]) << 24 | static_cast<uint32_t>(a.bytes[1]) << 16 |
                     static_cast<uint32_t>(a.bytes[2]) << 8 | a.bytes[3];
        size_t i = static_cast<size_t>(std::upper_bound(v4_start_.begin(), v4_start_.end(), x) - v4_start_.begin()) - 1;
        U128 e = i + 1 < v4_start_.size() ? U128(v4_start_[i + 1]) - 1 : full(32);
        return Hit{v4_country_[i], block_prefix(x, v4_start_[i], e, 32)};
    }
    std::array<uint64_t, 2> key{};
    for (int k = 0; k < 8; ++k) key[0] = key[0] << 8 | a.bytes[static_cast<size_t>(k)];
    for (int k = 8; k < 16; ++k) key[1] = key[1] << 8 | a.bytes[static_cast<size_t>(k)];
    size_t i = static_cast<size_t>(std::upper_bound(v6_start_.begin(), v6_start_.end(), key) - v6_start_.begin()) - 1;
    auto wide = [](const std::array<uint64_t, 2>& v) { return U128(v[0]) << 64 | v[1]; };
    U128 e = i + 1 < v6_start_.size() ? wide(v6_start_[i + 1]) - 1 : full(128);
    return Hit{v6_country_[i], block_prefix(wide(key), wide(v6_start_[i]), e, 128)};
}

size_t LocationDb::bytes() const {
    size_t n = v4_start_.capacity() * sizeof(uint32_t) + v4_country_.capacity() * sizeof(int16_t) +
               v6_start_.capacity() * sizeof(v6_start_[0]) + v6_country_.capacity() * sizeof(int16_t);
    for (size_t i = 0; i < codes_.size(); ++i)
        n += sizeof(std::string) * 2 + codes_[i].capacity() + continents_[i].capacity();
    return n;
}

}  // namespace glbd::geo
