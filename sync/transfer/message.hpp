// sync/transfer/message — the writer of a `_glbd.` message (transfers, requests, beats): a header, an optional
// question, then records in section order, straight to wire. Owns one message's bytes and its section counts.
// Internal to sync/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "resolver/wire/builder.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"
#include "sync/state.hpp"

namespace glbd::sync {

inline constexpr size_t kMessageBudget = 32000;  // split transfers into messages of about this size

// A DNS message written straight to wire: header, an optional `_glbd.` question, then records, written in
// section order (answer, authority, additional).
class Message {
public:
    enum class Section : uint8_t { answer, authority, additional };

    Message(uint16_t id, uint16_t flags) { b_.u16(id), b_.u16(flags), b_.u16(0), b_.u16(0), b_.u16(0), b_.u16(0); }
    void question(uint16_t qtype, uint16_t qclass = wire::kClassIn) {
        name(kSyncZone), b_.u16(qtype), b_.u16(qclass);
        qd_ = 1;
    }
    void soa(uint32_t serial, Section in = Section::answer) {
        size_t rd = header(sync_zone_wire(), wire::type::SOA, in);
        name("glbd."), name("hostmaster.glbd.");
        for (uint32_t v : {serial, 1u, 1u, 1u, 1u}) b_.u32(v);
        b_.end_rdata(rd);
    }
    void txt(const std::string& owner, const std::vector<std::string>& strings, Section in = Section::answer) {
        txt_wire(wire::name_to_wire(owner).value_or(std::string(1, '\0')), strings, {}, in);
    }
    // A TXT record owned by a wire name: `strings`, then RDATA encoded already (EncodedData).
    void txt_wire(std::string_view owner_wire, const std::vector<std::string>& strings, std::string_view rdata,
                  Section in = Section::answer) {
        size_t rd = header(owner_wire, wire::type::TXT, in);
        for (const auto& s : strings) b_.text(s);
        b_.bytes(rdata);
        b_.end_rdata(rd);
    }
    [[nodiscard]] size_t size() const { return b_.size(); }
    void reserve(size_t bytes) { b_.reserve(bytes); }
    std::vector<uint8_t> finish() {
        b_.patch16(4, static_cast<uint16_t>(qd_));
        for (int i = 0; i < 3; ++i) b_.patch16(6 + 2 * static_cast<size_t>(i), static_cast<uint16_t>(counts_[i]));
        return std::move(b_.vec());
    }

private:
    void name(const std::string& n) { b_.bytes(wire::name_to_wire(n).value_or(std::string(1, '\0'))); }
    // Owner, type, class IN, TTL 0; returns where the RDATA starts.
    size_t header(std::string_view owner_wire, uint16_t type, Section in) {
        b_.bytes(owner_wire), b_.u16(type), b_.u16(wire::kClassIn), b_.u32(0);
        ++counts_[static_cast<int>(in)];
        return b_.begin_rdata();
    }
    wire::Builder b_;
    unsigned qd_ = 0, counts_[3] = {};
};

}  // namespace glbd::sync
