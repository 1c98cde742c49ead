// resolver/wire/text — the presentation forms of wire data: domain names (RFC 1035 5.1, without escapes)
// and base64 (RFC 4648, as TSIG secrets are written). Allocates; for configuration and control paths, never
// the answer path.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace glbd::wire {

// "Shop.Example.com." or "shop.example.com" to lower-cased wire form; nullopt for an empty label, a label
// over 63 bytes, a name over 255, or a byte that needs an escape (space, control, quote, backslash, non-ASCII).
std::optional<std::string> name_to_wire(std::string_view text);
// Wire form back to text, with no trailing dot; "." for the root.
std::string wire_to_name(std::string_view wire);

// Strict base64: length a multiple of 4, at most two '=' and only at the end; nullopt otherwise.
std::optional<std::string> base64_decode(std::string_view text);
std::string base64_encode(std::string_view bytes);

}  // namespace glbd::wire
