// sync/transfer/serving — answering peers (internal to sync/; the TCP thread): a signed request for `_glbd.`
// (AXFR, IXFR, SOA) answered from the store, a NOTIFY handed to the sync thread, anything unsigned or replayed
// refused and logged. Owns: the MACs answered lately (a replay is NOTAUTH), each origin's data as last encoded
// (encoded once per change, sent as it is to every puller), the throttle of its rejection lines (shared with
// the beats' rejections, which the sync thread logs).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sync/core.hpp"

namespace glbd::sync {

class Serving {
public:
    using Auth = Service::Auth;
    using Handled = Service::Handled;
    explicit Serving(Core& core) : core_(core) {}
    static Auth verify(const tsig::Key& key, const uint8_t* wire, size_t len, uint64_t now_s, std::string* mac);
    Handled handle(const uint8_t* msg, size_t len, const geo::Address& from, std::vector<std::vector<uint8_t>>& out,
                   MoreMessages& more);
    void reject(Auth a, const char* what, const std::string& peer);  // what: NOTIFY, transfer, heartbeat
    // One origin's record for a transfer and, when asked, its data (false: no longer known): its outside
    // verdicts alone when the puller holds (`held`, if it reads such reports) its life at the state's
    // base_version or later; and this instance's origin name.
    bool encode_origin(const std::string& origin, bool data, const std::optional<Held>& held,
                       std::vector<std::string>& record, std::shared_ptr<const EncodedData>& encoded)
        GLBD_EXCLUDES(core_.mu);
    std::string own_origin_name() const GLBD_EXCLUDES(core_.mu);

private:
    bool first_use(const std::string& mac);
    // The `_glbd.` zone as a transfer: SOA, the records, SOA; split into messages of about kMessageBudget
    // bytes, each signed (the first with the request's MAC, the next ones chained), written one message at
    // a time by the returned producer as the connection takes them (see serving.cpp).
    MoreMessages transfer(std::shared_ptr<const tsig::Key> key, uint16_t id, uint16_t qtype, const std::string& req_mac,
                          std::optional<uint32_t> known_serial, const SyncRequest& req) GLBD_EXCLUDES(core_.mu);

    Core& core_;
    // The MACs of the signed requests answered lately: one seen again is a replay (NOTAUTH). Kept for
    // kMacKeepMs (a signature's time is good for 300 s either way), at most kMaxMacs.
    static constexpr size_t kMaxMacs = 16384;
    static constexpr uint64_t kMacKeepMs = 600'000;
    Mutex macs_mu_;
    std::set<std::string> seen_macs_ GLBD_GUARDED_BY(macs_mu_);
    std::deque<std::pair<uint64_t, std::string>> mac_order_ GLBD_GUARDED_BY(macs_mu_);
    // Each origin's data as last served, encoded once per data change (its Known::changed_generation).
    struct Served {
        uint32_t generation;
        std::shared_ptr<const EncodedData> data;
        std::shared_ptr<const EncodedData> outside;  // its outside verdicts alone (made when first sent so)
    };
    std::map<std::string, Served> served_data_ GLBD_GUARDED_BY(core_.mu);
    Mutex reject_mu_;  // the TCP thread (requests) and the sync thread (beats)
    // Rejected requests, per source address and reason: a line every 5 s at most, with how many were not logged
    // (a peer with the wrong key retries twice a second, for ever).
    LogThrottle reject_log_ GLBD_GUARDED_BY(reject_mu_){1, 5'000};
};

}  // namespace glbd::sync
