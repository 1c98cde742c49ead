// libFuzzer target: sync messages. The bytes go to the TCP handler as a request (signed or not), to
// TSIG verification as a response, and, split into TXT strings, to the `_glbd.` record decoder.
#include <cstdint>
#include <string>
#include <vector>

#include "sync/peers.hpp"
#include "sync/state.hpp"
#include "sync/tsig.hpp"
#include "tests/dns_util.hpp"

using namespace glbd;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static sync::Service* svc = new sync::Service(test::config_from(R"(cluster: {id: eu, instance: a}
listen: {dns: ["127.0.0.1:5399"]}
zones: [{origin: glb.test, nameservers: [{name: ns.glb.test, addresses: [127.0.0.1]}]}]
peers:
  key: {name: glb-sync, secret: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="}
)"), nullptr);
    static auto key = tsig::Key::from("glb-sync", "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=");
    geo::Address from;
    geo::Address::parse("127.0.0.9", from);
    std::vector<std::vector<uint8_t>> out;
    svc->handle(data, size, from, out);
    std::string mac;
    tsig::verify(data, size, key, "prior", size % 2 == 0, 1796000000, &mac);
    // The same bytes as TXT strings: records split at 0xff, strings at 0x00.
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
    std::string f, err;
    std::vector<sync::Report> reports;
    sync::decode(records, f, reports, err);
    sync::Store store;
    for (const auto& r : reports) r.has_data ? (void)store.merge(r.state, r.age_ms, 5000) : (void)store.merge_heartbeat(r.state, r.age_ms, 5000, nullptr);
    (void)store.view(5000, 3000);
    return 0;
}
