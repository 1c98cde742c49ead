// resolver/model/endpoint — an endpoint as glbd holds it: an IP address (binary) or a host name (lower case, no
// trailing dot), parsed once where it enters (the config, a DNSRecord, a peer's report, stateDir) and never again:
// the snapshot builder writes an address's A or AAAA and a name's CNAME from it, the health checker probes the
// address or resolves the name, and text is made only to be written out (str()). Plain data; any thread.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>

#include "resolver/base/address.hpp"

namespace glbd {

class Endpoint {
public:
    // The unspecified address 0.0.0.0: what a default-made EndpointState holds (the decoders and the state-file
    // reader build a row, then assign what they parsed); never served, as every parse assigns one.
    Endpoint() = default;
    explicit Endpoint(const Address& a) : v_(a) {}
    // From a literal written in code (a test's, a default): parsed; std::invalid_argument for one that is not an
    // endpoint, a mistake in the code. Only arrays bind here: text from outside goes through parse().
    template <size_t N>
    Endpoint(const char (&literal)[N]) : Endpoint(must_parse(std::string_view(literal, N - 1))) {}  // NOLINT
    // An IP address (as inet_pton reads it) or a host name as model::is_endpoint accepts it; nullopt otherwise.
    static std::optional<Endpoint> parse(std::string_view text);

    [[nodiscard]] bool is_address() const noexcept { return v_.index() == 0; }
    [[nodiscard]] const Address& address() const noexcept { return *std::get_if<0>(&v_); }   // is_address() only
    [[nodiscard]] const std::string& name() const noexcept { return *std::get_if<1>(&v_); }  // !is_address() only
    // "192.0.2.1", "2001:db8::1" (inet_ntop's form), or the name.
    [[nodiscard]] std::string str() const { return is_address() ? address().str() : name(); }
    void append_to(std::string& out) const { is_address() ? address().append_to(out) : void(out += name()); }

    bool operator==(const Endpoint&) const = default;
    // Addresses first, then names; any fixed order will do.
    auto operator<=>(const Endpoint& o) const = default;  // NOLINT(modernize-use-nullptr): clang-tidy 14 on <=>

private:
    explicit Endpoint(std::string name) : v_(std::move(name)) {}
    static Endpoint must_parse(std::string_view literal);
    [[no_unique_address]] std::variant<Address, std::string> v_;  // (so that its tail padding may hold more)
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
