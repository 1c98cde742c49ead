// libFuzzer target: what a Kubernetes API server sends, as a hostile one could, through the path glbd reads
// it: the input as a watch stream and as a list (sync/kube/stream), each object read as a DNSRecord
// (read_record_text, or its metadata alone when too large) and mapped in every mode (map_record). Nothing may
// throw; a mapped entry and a static record must satisfy the rules glbd holds them to, and the stream must
// keep its bounds.
#include <cstdint>
#include <string>
#include <string_view>

#include "resolver/model/names.hpp"
#include "sync/kube/records.hpp"
#include "sync/kube/stream.hpp"

using namespace glbd;

namespace {

const std::vector<model::Zone>& zones() {
    static const std::vector<model::Zone> z = [] {
        model::Zone a, b;
        a.origin = "glb.example.com";
        a.nameservers = {{"ns1.glb.example.com", {"192.0.2.53"}}};
        b.origin = "example.net";
        return std::vector<model::Zone>{a, b};
    }();
    return z;
}

void check(const kube::Record& r) {
    for (auto mode : {kube::Mode::coredns, kube::Mode::delegate, kube::Mode::controller}) {
        kube::MapOptions o;
        o.mode = mode;
        o.zones = zones();
        o.owners = {{"team-a", {"a.glb.example.com"}}};
        kube::Mapped m = kube::map_record(r, o);
        if (!m.error.empty() && (!m.hosts.empty() || !m.records.empty())) __builtin_trap();
        for (const auto& h : m.hosts) {
            if (!model::is_lb_host_name(h.name) || h.endpoints.empty() || h.ttl == 0) __builtin_trap();
            if (h.endpoints.size() > kube::RecordLimits::kMaxTargets) __builtin_trap();
            for (const auto& ep : h.endpoints) {
                if (Endpoint::parse(ep.str()) != ep) __builtin_trap();  // its text reads back as itself
            }
            if (h.load_balancing && !h.load_balancing->geo.empty() && !conf::is_geo_code(h.load_balancing->geo))
                __builtin_trap();
            if (h.health_check && h.health_check->path.find_first_of("/?") != 0) __builtin_trap();
        }
        for (const auto& s : m.records) {
            if (!model::is_lb_host_name(s.name) || s.targets.empty() || s.ttl == 0) __builtin_trap();
        }
    }
}

constexpr size_t kMaxObject = 512;  // small, so that the fuzzer reaches the cut-short path with small inputs

kube::Record read(kube::ObjectStream::Object&& o) {
    if (o.whole && (o.text.size() != o.bytes || o.bytes > kMaxObject)) __builtin_trap();
    if (!o.whole && o.bytes <= kMaxObject) __builtin_trap();
    if (o.metadata.size() > kube::ObjectStream::kMaxSmall) __builtin_trap();
    if (o.whole) return kube::read_record_text(o.text);
    auto md = nlohmann::json::parse(o.metadata, nullptr, false);
    return kube::read_record(nlohmann::json{{"metadata", md.is_object() ? md : nlohmann::json::object()}}, o.bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    for (auto shape : {kube::ObjectStream::Shape::events, kube::ObjectStream::Shape::list}) {
        kube::ObjectStream stream(
            shape, kMaxObject, [](kube::ObjectStream::Object&& o) { check(read(std::move(o))); },
            [](kube::ObjectStream::Done&& d) {
                if (d.metadata.size() > kube::ObjectStream::kMaxSmall) __builtin_trap();
            });
        // Fed in two pieces: where a read ends must not matter.
        (void)stream.feed(in.substr(0, size / 2));
        (void)stream.feed(in.substr(size / 2));
    }
    check(kube::read_record_text(in));
    return 0;
}
