// libFuzzer target: what a Kubernetes API server sends, as a hostile one could: each line of the input as a
// watch event (parse_event), each event's object as a DNSRecord (map_record), and the whole input as a list.
// Nothing may throw; a mapped host must satisfy the rules glbd holds hosts to.
#include <cstdint>
#include <string>
#include <string_view>

#include "conf/names.hpp"
#include "sync/kube/client.hpp"
#include "sync/kube/records.hpp"

using namespace glbd;

namespace {

const std::vector<conf::Zone>& zones() {
    static const std::vector<conf::Zone> z = [] {
        conf::Zone a, b;
        a.origin = "glb.example.com";
        b.origin = "example.net";
        return std::vector<conf::Zone>{a, b};
    }();
    return z;
}

void check(const nlohmann::json& object) {
    kube::Mapped m = kube::map_record(object, zones());
    (void)kube::key_of(object);
    if (!m.error.empty() && !m.hosts.empty()) __builtin_trap();
    for (const auto& h : m.hosts) {
        if (!conf::is_lb_host_name(h.name) || h.endpoints.empty() || h.ttl == 0) __builtin_trap();
        for (const auto& ep : h.endpoints) {
            if (!conf::is_endpoint(ep)) __builtin_trap();
        }
        if (h.load_balancing && !h.load_balancing->geo.empty() && !conf::is_geo_code(h.load_balancing->geo))
            __builtin_trap();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    size_t start = 0;
    while (start <= in.size()) {
        size_t nl = in.find('\n', start);
        std::string_view line = in.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
        kube::WatchEvent ev = kube::parse_event(line);
        if (ev.ok) check(ev.object);
        if (nl == std::string_view::npos) break;
        start = nl + 1;
    }
    auto list = nlohmann::json::parse(in.begin(), in.end(), nullptr, false);
    if (list.is_object() && list.contains("items") && list["items"].is_array()) {
        for (const auto& item : list["items"]) check(item);
    }
    return 0;
}
