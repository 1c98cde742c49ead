// libFuzzer target: sync messages, hostile but (in half of the runs) correctly signed, as a peer holding
// the key could send them. The bytes go to the TCP handler as a request, unsigned and then signed with the
// target's own key (so that transfers, IXFR serials, "have=" versions and NOTIFY are reached); to TSIG
// verification as a response; to the pulling side's message parser; and its TXT records to the `_glbd.`
// decoder, the report checks (what they accept must be clean UTF-8), the store's merge, the merged view and
// the stateDir writer; and as a heartbeat (a UDP NOTIFY) to the beat parser and, signed, to the service. None
// of them may throw.
#include <cstdint>
#include <ctime>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "resolver/model/names.hpp"
#include "sync/service.hpp"
#include "sync/state.hpp"
#include "sync/state_file.hpp"
#include "sync/transfer/codec.hpp"
#include "sync/transfer/tsig.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

namespace {

constexpr const char* kSecret = "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=";

// The bytes as TXT strings when they are not a DNS message: records split at 0xff, strings at 0x00.
std::vector<std::vector<std::string>> as_records(const uint8_t* data, size_t size) {
    std::vector<std::vector<std::string>> records(1);
    std::string cur;
    for (size_t i = 0; i < size; ++i) {
        if (data[i] == 0xff) {
            records.back().push_back(cur), cur.clear();
            records.emplace_back();
        } else if (data[i] == 0) {
            records.back().push_back(cur), cur.clear();
        } else {
            cur.push_back(static_cast<char>(data[i]));
        }
    }
    records.back().push_back(cur);
    return records;
}

void merge_and_dump(const std::vector<std::vector<std::string>>& records) {
    std::string from, err;
    std::vector<sync::Report> reports;
    if (!sync::decode(records, from, reports, err)) return;
    sync::Store store;
    store.set_own(sync::InstanceState{"eu", "a", 1, 1, {}, {}, 0}, 5000);
    for (const auto& r : reports) {
        r.has_data ? (void)store.merge(r.state, r.age_ms, 5000)
                   : (void)store.merge_heartbeat(r.state, r.age_ms, 5000, nullptr);
    }
    (void)store.view(5000, 3000);
    (void)store.overrides();
    // What check_report() accepts is clean: its JSON needs no replacement of invalid bytes (a strict dump
    // throws on them) and it merges like any report.
    sync::Store checked;
    for (auto& r : reports) {
        if (!sync::check_report(r.state, 5000).error.empty()) continue;
        for (const auto& h : r.state.hosts) {  // what is left of the report keeps every rule
            if (!model::is_lb_host_name(h.host) || h.endpoints.size() > sync::ReportLimits::kMaxEndpoints) {
                __builtin_trap();
            }
        }
        try {
            (void)nlohmann::json(r.state.origin()).dump();
            for (const auto& h : r.state.hosts) {
                (void)nlohmann::json(h.host).dump();
                for (const auto& ep : h.endpoints) (void)nlohmann::json(ep.target.str()).dump();
                if (h.load_balancing) (void)nlohmann::json(h.load_balancing->geo).dump();
            }
            for (const auto& [target, e] : r.state.overrides) (void)nlohmann::json(target).dump();
        } catch (const nlohmann::json::exception&) {
            __builtin_trap();
        }
        (void)checked.merge(r.state, r.age_ms, 5000);
    }
    std::vector<sync::InstanceState> states;
    for (const auto& [origin, k] : store.known()) states.push_back(k.state);
    std::ostringstream out;
    sync::write_state_file(out, states, 1);
    // What was written reads back (invalid bytes were replaced, so it is valid JSON).
    std::istringstream in(out.str());
    if (sync::read_state_file(in).size() != states.size()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static sync::Service* svc = new sync::Service(test::config_from(std::string(R"(cluster: {id: eu, instance: a}
listen: {dns: ["127.0.0.1:5399"]}
zones: [{origin: glb.test, nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]}]
peers:
  key: {name: glb-sync, secret: ")") + kSecret + "\"}\n"),
                                                  nullptr);
    static auto key = tsig::Key::from("glb-sync", kSecret);
    geo::Address from = test::address_of("127.0.0.9");
    std::vector<std::vector<uint8_t>> out;
    svc->handle(data, size, from, out);
    if (size >= 12) {
        std::vector<uint8_t> signed_msg(data, data + size);
        tsig::sign(signed_msg, key, "", false, static_cast<uint64_t>(std::time(nullptr)));
        out.clear();
        svc->handle(signed_msg.data(), signed_msg.size(), from, out);
        for (const auto& m : out) {
            if (m.size() > 65535) __builtin_trap();  // a TCP message cannot be longer
        }
    }
    // As a peer's heartbeat: parsed (what it accepts carries no data), then taken by the service, signed.
    sync::Beat beat;
    std::string error;
    if (sync::parse_beat(data, size, beat, error)) {
        if (beat.from.empty() || beat.seq == 0) __builtin_trap();
        for (const auto& r : beat.reports) {
            if (r.has_data || !r.state.hosts.empty() || !r.state.overrides.empty()) __builtin_trap();
        }
    }
    if (size >= 12) {
        std::vector<uint8_t> signed_beat(data, data + size);
        tsig::sign(signed_beat, key, "", false, static_cast<uint64_t>(std::time(nullptr)));
        svc->take_beat(signed_beat.data(), signed_beat.size(), SocketAddress{from, 5300});
    }
    std::string mac;
    tsig::verify(data, size, key, "prior", size % 2 == 0, 1796000000, &mac);
    std::vector<std::vector<std::string>> txts;
    int soas = 0;
    uint32_t serial = 0;
    if (sync::parse_transfer_answers(data, size, txts, soas, serial)) merge_and_dump(txts);
    merge_and_dump(as_records(data, size));
    return 0;
}
