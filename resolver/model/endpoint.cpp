#include "resolver/model/endpoint.hpp"

#include "resolver/model/names.hpp"

#include <ostream>

namespace glbd {

std::optional<Endpoint> Endpoint::parse(std::string_view text) {
    if (Address a; Address::parse(text, a)) return Endpoint(a);
    if (!model::is_host_name(text) || text.back() == '.' || !model::is_canonical_name(text)) return std::nullopt;
    return Endpoint(std::string(text));
}

std::ostream& operator<<(std::ostream& out, const Endpoint& e) { return out << e.str(); }

Endpoint Endpoint::must_parse(std::string_view literal) {
    if (auto e = parse(literal)) return *e;
    throw std::invalid_argument("not an endpoint: \"" + std::string(literal) + "\"");
}

}  // namespace glbd
