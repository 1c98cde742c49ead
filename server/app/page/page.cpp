#include "server/app/page/page.hpp"

#include <openssl/sha.h>

#include <string_view>

#include "resolver/wire/text.hpp"

namespace glbd::page {
namespace {

constexpr std::string_view kPage =
#include "status_page.inc"
    ;

// "'sha256-<base64>'" of the text between the first `<tag>` and `</tag>` (CSP source expression).
std::string inline_hash(std::string_view tag) {
    std::string open = "<" + std::string(tag) + ">", close = "</" + std::string(tag) + ">";
    size_t from = kPage.find(open);
    size_t to = kPage.find(close, from);
    if (from == std::string_view::npos || to == std::string_view::npos) return "'none'";
    std::string_view body = kPage.substr(from + open.size(), to - from - open.size());
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char*>(body.data()), body.size(), digest);
    return "'sha256-" + wire::base64_encode(std::string_view(reinterpret_cast<const char*>(digest), sizeof digest)) +
           "'";
}

}  // namespace

const admin::Response& status_page() {
    static const admin::Response page = [] {
        admin::Response r;
        r.content_type = "text/html; charset=utf-8";
        r.body = std::string(kPage);
        r.headers.emplace_back(
            "Content-Security-Policy",
            "default-src 'none'; script-src " + inline_hash("script") + "; style-src " + inline_hash("style") +
                "; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
        r.headers.emplace_back("X-Frame-Options", "DENY");
        r.headers.emplace_back("Referrer-Policy", "no-referrer");
        return r;
    }();
    return page;
}

}  // namespace glbd::page
