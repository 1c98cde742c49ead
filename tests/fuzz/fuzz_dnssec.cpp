// libFuzzer target: a DNSSEC key pair as found on disk -> dnssec::Key::load. The input is the .key file, a
// line "====", then the .private file (mode 0600). A pair that loads must be what it says: a DNSKEY RDATA of
// the algorithm's size (P-256: 64-byte key, Ed25519: 32), flags 256 or 257, and a DS line of this zone.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "resolver/dnssec/keys.hpp"
#include "scratch.hpp"

namespace {

const std::string& dir() {
    static const glbd::fuzz::Scratch d(glbd::fuzz::Scratch::directory("glbd-fuzz-keys-"));
    return d.path();
}

void put(const std::string& file, std::string_view text, mode_t mode) {
    int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0) std::abort();
    if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) std::abort();
    ::close(fd);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto cut = in.find("\n====\n");
    std::string_view pub = in.substr(0, cut), priv = cut == std::string_view::npos ? "" : in.substr(cut + 6);
    const std::string path = dir() + "/key";
    put(path + ".key", pub, 0644);
    put(path + ".private", priv, 0600);
    std::string error;
    auto key = glbd::dnssec::Key::load(path, "glb.example.com", error);
    if (!key) {
        if (error.empty()) __builtin_trap();
        return 0;
    }
    size_t want = key->algorithm() == glbd::dnssec::kEcdsaP256Sha256 ? 68 : 36;
    if (key->rdata().size() != want || (key->flags() != 256 && key->flags() != 257)) __builtin_trap();
    if (key->ds().rfind("glb.example.com. IN DS " + std::to_string(key->tag()) + " ", 0) != 0) __builtin_trap();
    return 0;
}
