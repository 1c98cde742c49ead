#include "resolver/wire/text.hpp"

#include <openssl/evp.h>

#include <cctype>

namespace glbd::wire {

std::optional<std::string> name_to_wire(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (text == ".") return std::string(1, '\0');
    if (text.back() == '.') text.remove_suffix(1);
    std::string wire;
    size_t start = 0;
    while (start <= text.size()) {
        size_t dot = text.find('.', start);
        if (dot == std::string_view::npos) dot = text.size();
        size_t len = dot - start;
        if (len == 0 || len > 63) return std::nullopt;
        wire.push_back(static_cast<char>(len));
        for (size_t i = start; i < dot; ++i) {
            unsigned char c = static_cast<unsigned char>(text[i]);
            if (c <= ' ' || c >= 0x7f || c == '\\' || c == '"') return std::nullopt;
            wire.push_back(static_cast<char>(std::tolower(c)));
        }
        start = dot + 1;
    }
    wire.push_back('\0');
    if (wire.size() > 255) return std::nullopt;
    return wire;
}

std::string wire_to_name(std::string_view wire) {
    std::string out;
    size_t i = 0;
    while (i < wire.size() && wire[i] != 0) {
        size_t len = static_cast<unsigned char>(wire[i]);
        if (!out.empty()) out += '.';
        out.append(wire.substr(i + 1, len));
        i += len + 1;
    }
    return out.empty() ? "." : out;
}

// OpenSSL does the coding; the checks before it make it strict (EVP_DecodeBlock skips white space and
// returns the padding as zero bytes).
std::optional<std::string> base64_decode(std::string_view in) {
    if (in.size() % 4 != 0) return std::nullopt;
    size_t pad = 0;
    while (pad < 2 && pad < in.size() && in[in.size() - 1 - pad] == '=') ++pad;
    for (size_t i = 0; i + pad < in.size(); ++i) {
        unsigned char c = static_cast<unsigned char>(in[i]);
        if (!std::isalnum(c) && c != '+' && c != '/') return std::nullopt;
    }
    std::string out(in.size() / 4 * 3, '\0');
    int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
    if (n < 0 || static_cast<size_t>(n) < pad) return std::nullopt;
    out.resize(static_cast<size_t>(n) - pad);
    return out;
}

std::string base64_encode(std::string_view in) {
    std::string out((in.size() + 2) / 3 * 4 + 1, '\0');
    int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                            reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
    out.resize(n > 0 ? static_cast<size_t>(n) : 0);
    return out;
}

}  // namespace glbd::wire
