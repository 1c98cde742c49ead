// The serving side of sync (TCP thread): a peer's signed request for `_glbd.` (AXFR, IXFR, SOA) or its
// NOTIFY, answered from the store.
#include <spdlog/spdlog.h>

#include <ctime>

#include "sync/service_impl.hpp"

namespace glbd::sync {

// ---- serving (TCP thread)
Service::Auth Service::Impl::verify(const tsig::Key& key, const uint8_t* wire, size_t len, uint64_t now_s, std::string* mac) {
    switch (tsig::verify(wire, len, key, "", false, now_s, mac)) {
        case tsig::Status::ok: return Auth::ok;
        case tsig::Status::unsigned_: return Auth::unsigned_;
        case tsig::Status::badkey: return Auth::badkey;
        case tsig::Status::badtime: return Auth::badtime;
        default: return Auth::badsig;
    }
}

Service::Handled Service::Impl::handle(const uint8_t* msg, size_t len, const geo::Address& from, std::vector<std::vector<uint8_t>>& out) {
    if (!networked || len < 12) return Handled::not_ours;
    uint16_t opcode = (msg[2] >> 3) & 0xf;
    ldns_pkt* raw = nullptr;
    if (ldns_wire2pkt(&raw, msg, len) != LDNS_STATUS_OK) return Handled::not_ours;
    PktPtr req = make_pkt(raw);
    if (ldns_pkt_qr(req.get()) || ldns_rr_list_rr_count(ldns_pkt_question(req.get())) != 1) return Handled::not_ours;
    const ldns_rr* q = ldns_rr_list_rr(ldns_pkt_question(req.get()), 0);
    if (!is_sync_name(ldns_rr_owner(q))) return Handled::not_ours;
    if (opcode != 0 && opcode != kOpNotify) return Handled::not_ours;
    std::string peer = from.str();
    std::string req_mac;
    auto key = current_key();
    if (!key) return Handled::not_ours;
    Auth a = verify(*key, msg, len, static_cast<uint64_t>(std::time(nullptr)), &req_mac);
    if (a != Auth::ok) {
        const char* why = a == Auth::unsigned_ ? "unsigned" : a == Auth::badkey ? "unknown key" : a == Auth::badsig ? "bad signature" : "stale signature";
        (a == Auth::unsigned_ ? counters.rejected_unsigned : a == Auth::badkey ? counters.rejected_badkey
         : a == Auth::badsig ? counters.rejected_badsig : counters.rejected_badtime).fetch_add(1);
        uint64_t left_out = 0;
        if (reject_log.allow(peer + " " + why, now_ms(), &left_out)) {
            spdlog::warn("sync: rejected {} request from {}: {}{}", opcode == kOpNotify ? "NOTIFY" : "transfer", peer, why,
                         left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
        }
        out.push_back(error_response(req.get(), a == Auth::unsigned_ ? LDNS_RCODE_REFUSED : LDNS_RCODE_NOTAUTH));
        return Handled::rejected;
    }
    if (opcode == kOpNotify) {
        counters.notifies_received.fetch_add(1);
        Message resp(ldns_pkt_id(req.get()), static_cast<uint16_t>(0x8000 | kOpNotify << 11 | 0x0400));
        resp.question(ldns_rr_get_type(q));
        out.push_back(resp.finish());
        tsig::sign(out.back(), *key, req_mac, false, static_cast<uint64_t>(std::time(nullptr)));
        {
            MutexLock lock(mu);
            pull_now.insert(peer);
        }
        wake_up();
    } else if (ldns_rr_get_type(q) == LDNS_RR_TYPE_AXFR || ldns_rr_get_type(q) == LDNS_RR_TYPE_IXFR ||
               ldns_rr_get_type(q) == LDNS_RR_TYPE_SOA) {
        counters.served.fetch_add(1);
        // IXFR with the generation the puller already has: heartbeats only.
        std::optional<uint32_t> known_serial;
        ldns_rr_list* auth = ldns_pkt_authority(req.get());
        if (ldns_rr_get_type(q) == LDNS_RR_TYPE_IXFR && ldns_rr_list_rr_count(auth) == 1 &&
            ldns_rr_get_type(ldns_rr_list_rr(auth, 0)) == LDNS_RR_TYPE_SOA && ldns_rr_rd_count(ldns_rr_list_rr(auth, 0)) == 7) {
            known_serial = ldns_rdf2native_int32(ldns_rr_rdf(ldns_rr_list_rr(auth, 0), 2));
        }
        // The versions the puller already holds ("have=cluster/instance@version/incarnation"): those need no
        // data.
        std::map<std::string, Held> have;
        ldns_rr_list* add = ldns_pkt_additional(req.get());
        for (size_t i = 0; i < ldns_rr_list_rr_count(add); ++i) {
            const ldns_rr* rr = ldns_rr_list_rr(add, i);
            if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_TXT) continue;
            for (size_t k = 0; k < ldns_rr_rd_count(rr); ++k) {
                const ldns_rdf* r = ldns_rr_rdf(rr, k);
                if (ldns_rdf_size(r) < 2) continue;
                std::string v(reinterpret_cast<const char*>(ldns_rdf_data(r)) + 1, ldns_rdf_data(r)[0]);
                auto at = v.rfind('@');
                if (v.rfind("have=", 0) != 0 || at == std::string::npos) continue;
                char* end = nullptr;
                Held h{std::strtoull(v.c_str() + at + 1, &end, 10), 0};
                if (*end == '/') h.incarnation = std::strtoull(end + 1, nullptr, 10);
                have[v.substr(5, at - 5)] = h;
            }
        }
        transfer(*key, ldns_pkt_id(req.get()), ldns_rr_get_type(q), req_mac, known_serial, have, out);
    } else {
        out.push_back(error_response(req.get(), LDNS_RCODE_REFUSED));
    }
    return Handled::answered;
}

std::vector<uint8_t> Service::Impl::error_response(const ldns_pkt* req, ldns_pkt_rcode rcode) {
    auto resp = make_pkt(ldns_pkt_new());
    ldns_pkt_set_id(resp.get(), ldns_pkt_id(req));
    ldns_pkt_set_qr(resp.get(), true);
    ldns_pkt_set_opcode(resp.get(), ldns_pkt_get_opcode(req));
    ldns_pkt_set_rcode(resp.get(), rcode);
    ldns_pkt_push_rr(resp.get(), LDNS_SECTION_QUESTION, ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(req), 0)));
    return wire_of(resp.get());
}

std::vector<uint8_t> Service::Impl::wire_of(const ldns_pkt* p) {
    uint8_t* w = nullptr;
    size_t n = 0;
    std::vector<uint8_t> out;
    if (ldns_pkt2wire(&w, p, &n) == LDNS_STATUS_OK) out.assign(w, w + n);
    free(w);
    return out;
}

// What to send a puller that has our generation `since` (none: everything): data only for the
// origins that changed after it, heartbeats for all.
std::vector<Report> Service::Impl::reports_now(std::optional<uint32_t> since) {
    uint64_t now = now_ms();
    std::vector<Report> reports;
    for (const auto& [origin, k] : store.known()) {
        bool data = !since || newer(k.changed_generation, *since);
        Report r{k.state, now > k.last_heard_ms ? now - k.last_heard_ms : 0, data};
        if (origin == store.own_origin()) r.state.heartbeat = now, r.age_ms = 0;
        reports.push_back(std::move(r));
    }
    return reports;
}

// The `_glbd.` zone as a transfer: SOA, the records, SOA; split into messages of about
// kMessageBudget bytes, each signed (the first with the request's MAC, the next ones chained).
void Service::Impl::transfer(const tsig::Key& key, uint16_t id, uint16_t qtype, const std::string& req_mac, std::optional<uint32_t> known_serial,
    const std::map<std::string, Held>& have, std::vector<std::vector<uint8_t>>& out) {
    std::vector<std::vector<std::string>> records;
    uint32_t generation;
    {
        MutexLock lock(mu);
        generation = store.generation();
        // A serial from the future (another incarnation of ours) gets everything.
        if (known_serial && newer(*known_serial, generation)) known_serial.reset();
        auto reports = reports_now(known_serial);
        for (auto& r : reports) {
            auto it = have.find(r.state.origin());
            if (it != have.end() && it->second.incarnation == r.state.incarnation && it->second.version >= r.state.version) {
                r.has_data = false;
            }
        }
        records = encode(own.origin(), reports);
    }
    uint64_t now_s = static_cast<uint64_t>(std::time(nullptr));
    std::string prior = req_mac;
    bool first = true;
    Message msg(id, 0x8400);
    msg.question(qtype);
    msg.soa(generation);
    auto flush = [&] {
        out.push_back(msg.finish());
        prior = tsig::sign(out.back(), key, prior, !first, now_s);
        first = false;
        msg = Message(id, 0x8400);
    };
    if (qtype != LDNS_RR_TYPE_SOA) {
        // Owners name the records for people reading a transfer: the header at the apex, each origin
        // as o<N>, its hosts and overrides below it.
        int origin_n = 0, item = 0;
        for (const auto& rec : records) {
            std::string owner = kSyncZone;
            if (rec[0].rfind("origin=", 0) == 0) {
                ++origin_n, item = 0;
                owner = "o" + std::to_string(origin_n) + "." + kSyncZone;
            } else if (origin_n > 0) {
                owner = (rec[0].rfind("host=", 0) == 0 ? "h" : "v") + std::to_string(++item) + ".o" +
                        std::to_string(origin_n) + "." + kSyncZone;
            }
            if (msg.size() > kMessageBudget) flush();
            msg.txt(owner, rec);
        }
        msg.soa(generation);
    }
    flush();
}

}  // namespace glbd::sync
