// resolver/model/endpoint — an endpoint as glbd holds it: an IP address (binary) or a host name (lower case, no
// trailing dot), parsed once where it enters (the config, a DNSRecord, a peer's report, stateDir) and never again:
// the snapshot builder writes an address's A or AAAA and a name's CNAME from it, the health checker probes the
// address or resolves the name, and text is made only to be written out (str()). Plain data; any thread.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "resolver/base/address.hpp"

namespace glbd {

// 24 bytes, of which 17 are used (its tail padding may hold more: EndpointState's `healthy`): an address, or a
// name held once however often the endpoint is copied. A view of 10,000 hosts x 20 clusters holds 400,000 of
// them; as a variant of an address and a string they took 40 bytes (an entry's two, a 96-byte heap chunk
// rather than 64: 6 MB more).
class alignas(8) Endpoint {
public:
    // The unspecified address 0.0.0.0: what a default-made EndpointState holds (the decoders and the state-file
    // reader build a row, then assign what they parsed); never served, as every parse assigns one.
    Endpoint() = default;
    explicit Endpoint(const Address& a) : addr_(a) {}
    // From a literal written in code (a test's, a default): parsed; std::invalid_argument for one that is not an
    // endpoint, a mistake in the code. Only arrays bind here: text from outside goes through parse().
    template <size_t N>
    Endpoint(const char (&literal)[N]) : Endpoint(must_parse(std::string_view(literal, N - 1))) {}  // NOLINT
    // An IP address (as inet_pton reads it) or a host name as model::is_endpoint accepts it; nullopt otherwise.
    static std::optional<Endpoint> parse(std::string_view text);

    Endpoint(const Endpoint& o) : addr_(o.addr_) {
        if (!o.is_address()) new (slot()) Name(*o.slot());
    }
    Endpoint(Endpoint&& o) noexcept : addr_(o.addr_) {
        if (!o.is_address()) new (slot()) Name(std::move(*o.slot()));
    }
    Endpoint& operator=(const Endpoint& o) {
        if (this != &o) *this = Endpoint(o);
        return *this;
    }
    Endpoint& operator=(Endpoint&& o) noexcept {
        if (this == &o) return *this;
        reset();
        addr_ = o.addr_;
        if (!o.is_address()) new (slot()) Name(std::move(*o.slot()));
        return *this;
    }
    ~Endpoint() { reset(); }

    [[nodiscard]] bool is_address() const noexcept { return addr_.family != kName; }
    [[nodiscard]] const Address& address() const noexcept { return addr_; }      // is_address() only
    [[nodiscard]] const std::string& name() const noexcept { return **slot(); }  // !is_address() only
    // "192.0.2.1", "2001:db8::1" (inet_ntop's form), or the name.
    [[nodiscard]] std::string str() const { return is_address() ? address().str() : name(); }
    void append_to(std::string& out) const { is_address() ? address().append_to(out) : void(out += name()); }

    bool operator==(const Endpoint& o) const {
        if (is_address() != o.is_address()) return false;
        return is_address() ? addr_ == o.addr_ : name() == o.name();
    }
    // Addresses first, then names; any fixed order will do.
    std::strong_ordering operator<=>(const Endpoint& o) const {
        if (is_address() != o.is_address())
            return is_address() ? std::strong_ordering::less : std::strong_ordering::greater;
        if (!is_address()) return name() <=> o.name();
        if (addr_ == o.addr_) return std::strong_ordering::equal;
        return addr_ < o.addr_ ? std::strong_ordering::less : std::strong_ordering::greater;
    }

private:
    using Name = std::shared_ptr<const std::string>;
    static constexpr uint8_t kName = 0;  // addr_.family of a name: addr_.bytes holds its Name
    static_assert(sizeof(Name) <= sizeof(Address::bytes));

    explicit Endpoint(std::string name) {
        addr_.family = kName;
        new (slot()) Name(std::make_shared<const std::string>(std::move(name)));
    }
    static Endpoint must_parse(std::string_view literal);
    Name* slot() noexcept { return std::launder(reinterpret_cast<Name*>(addr_.bytes.data())); }
    [[nodiscard]] const Name* slot() const noexcept {
        return std::launder(reinterpret_cast<const Name*>(addr_.bytes.data()));
    }
    void reset() noexcept {
        if (is_address()) return;
        std::destroy_at(slot());
        addr_ = Address{};
    }
    Address addr_;  // family 4 or 6: the address; kName: a name (its bytes are the Name's storage, 8-aligned)
};

std::ostream& operator<<(std::ostream& out, const Endpoint& e);  // its text (str())

}  // namespace glbd

template <>
struct std::hash<glbd::Endpoint> {
    size_t operator()(const glbd::Endpoint& e) const noexcept {
        if (!e.is_address()) return std::hash<std::string>{}(e.name());
        const auto& b = e.address().bytes;
        return std::hash<std::string_view>{}(std::string_view(reinterpret_cast<const char*>(b.data()), b.size())) ^
               e.address().family;
    }
};
