// The serving side of sync (TCP thread): a peer's signed request for `_glbd.` (AXFR, IXFR, SOA) or its
// NOTIFY, answered from the store.
#include <spdlog/spdlog.h>

#include <ctime>

#include "sync/service_impl.hpp"

namespace glbd::sync {

// ---- serving (TCP thread)
Service::Auth Service::Impl::verify(const tsig::Key& key, const uint8_t* wire, size_t len, uint64_t now_s,
                                    std::string* mac) {
    switch (tsig::verify(wire, len, key, "", false, now_s, mac)) {
        case tsig::Status::ok: return Auth::ok;
        case tsig::Status::unsigned_: return Auth::unsigned_;
        case tsig::Status::badkey: return Auth::badkey;
        case tsig::Status::badtime: return Auth::badtime;
        default: return Auth::badsig;
    }
}

Service::Handled Service::Impl::handle(const uint8_t* msg, size_t len, const geo::Address& from,
                                       std::vector<std::vector<uint8_t>>& out, MoreMessages& more) {
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
        const char* why = a == Auth::unsigned_ ? "unsigned"
                          : a == Auth::badkey  ? "unknown key"
                          : a == Auth::badsig  ? "bad signature"
                                               : "stale signature";
        (a == Auth::unsigned_ ? counters.rejected_unsigned
         : a == Auth::badkey  ? counters.rejected_badkey
         : a == Auth::badsig  ? counters.rejected_badsig
                              : counters.rejected_badtime)
            .fetch_add(1);
        uint64_t left_out = 0;
        if (reject_log.allow(peer + " " + why, now_ms(), &left_out)) {
            spdlog::warn("sync: rejected {} request from {}: {}{}", opcode == kOpNotify ? "NOTIFY" : "transfer", peer,
                         why, left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
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
            ldns_rr_get_type(ldns_rr_list_rr(auth, 0)) == LDNS_RR_TYPE_SOA &&
            ldns_rr_rd_count(ldns_rr_list_rr(auth, 0)) == 7) {
            known_serial = ldns_rdf2native_int32(ldns_rr_rdf(ldns_rr_list_rr(auth, 0), 2));
        }
        // The versions the puller already holds ("have=cluster/instance@version/incarnation"): those need no
        // data.
        std::map<std::string, Held> have;
        bool own_only = false;  // "relay=0": data for our own origin only
        ldns_rr_list* add = ldns_pkt_additional(req.get());
        for (size_t i = 0; i < ldns_rr_list_rr_count(add); ++i) {
            const ldns_rr* rr = ldns_rr_list_rr(add, i);
            if (ldns_rr_get_type(rr) != LDNS_RR_TYPE_TXT) continue;
            for (size_t k = 0; k < ldns_rr_rd_count(rr); ++k) {
                const ldns_rdf* r = ldns_rr_rdf(rr, k);
                if (ldns_rdf_size(r) < 2) continue;
                std::string v(reinterpret_cast<const char*>(ldns_rdf_data(r)) + 1, ldns_rdf_data(r)[0]);
                if (v == kOwnOnly) own_only = true;
                auto at = v.rfind('@');
                if (v.rfind("have=", 0) != 0 || at == std::string::npos) continue;
                char* end = nullptr;
                Held h{std::strtoull(v.c_str() + at + 1, &end, 10), 0};
                if (*end == '/') h.incarnation = std::strtoull(end + 1, nullptr, 10);
                have[v.substr(5, at - 5)] = h;
            }
        }
        more = transfer(key, ldns_pkt_id(req.get()), ldns_rr_get_type(q), req_mac, known_serial, have, own_only);
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

namespace {

// A transfer being written (TCP thread), one message per call as the connection takes them. Each origin's
// records are encoded when its turn comes, under the lock, from the store as it is then; the serial (the
// store's generation when the request came) is in the first SOA. A change during the transfer is either in
// it or after that serial, so the puller's next IXFR brings it; each report is whole at its own version, the
// one thing a puller relies on. Holds one message and one origin's records.
class TransferWriter {
public:
    struct Origin {
        std::string name;
        bool data;
    };
    TransferWriter(Service::Impl& impl, std::shared_ptr<const tsig::Key> key, uint16_t id, uint16_t qtype,
                   std::string req_mac, uint32_t generation, std::vector<Origin> origins)
        : impl_(impl),
          key_(std::move(key)),
          id_(id),
          qtype_(qtype),
          prior_(std::move(req_mac)),
          generation_(generation),
          origins_(std::move(origins)),
          msg_(id, 0x8400),
          now_s_(static_cast<uint64_t>(std::time(nullptr))) {
        msg_.question(qtype_);
        msg_.soa(generation_);
        if (qtype_ != wire::type::SOA) pending_.push_back(encode_header(impl_.own_origin_name()));
    }

    // The next message; false when it is the last.
    bool next(std::vector<uint8_t>& out) {
        if (done_) return false;
        while (qtype_ != wire::type::SOA) {
            if (at_ == pending_.size()) {
                pending_.clear(), at_ = 0;
                if (!refill()) break;
                continue;
            }
            if (msg_.size() > kMessageBudget) return flush(out), true;
            msg_.txt(owner(pending_[at_]), pending_[at_]);
            ++at_;
        }
        if (qtype_ != wire::type::SOA) msg_.soa(generation_);
        flush(out);
        done_ = true;
        return false;
    }

private:
    // The records of the next origin still in the store (one that was forgotten meanwhile is left out).
    bool refill() {
        while (next_origin_ < origins_.size()) {
            const Origin& o = origins_[next_origin_++];
            if (impl_.encode_origin(o.name, o.data, pending_)) return true;
        }
        return false;
    }
    // Owners name the records for people reading a transfer: the header at the apex, each origin as o<N>,
    // its hosts and overrides below it.
    std::string owner(const std::vector<std::string>& rec) {
        if (rec[0].rfind("origin=", 0) == 0) {
            ++origin_n_, item_ = 0;
            return "o" + std::to_string(origin_n_) + "." + kSyncZone;
        }
        if (origin_n_ == 0) return kSyncZone;
        return (rec[0].rfind("host=", 0) == 0 ? "h" : "v") + std::to_string(++item_) + ".o" +
               std::to_string(origin_n_) + "." + kSyncZone;
    }
    void flush(std::vector<uint8_t>& out) {
        out = msg_.finish();
        prior_ = tsig::sign(out, *key_, prior_, !first_, now_s_);
        first_ = false;
        msg_ = Message(id_, 0x8400);
    }

    Service::Impl& impl_;
    std::shared_ptr<const tsig::Key> key_;
    uint16_t id_, qtype_;
    std::string prior_;
    uint32_t generation_;
    std::vector<Origin> origins_;
    size_t next_origin_ = 0;
    Message msg_;
    uint64_t now_s_;
    std::vector<std::vector<std::string>> pending_;
    size_t at_ = 0;
    int origin_n_ = 0, item_ = 0;
    bool first_ = true, done_ = false;
};

}  // namespace

std::string Service::Impl::own_origin_name() const {
    MutexLock lock(mu);
    return own.origin();
}

bool Service::Impl::encode_origin(const std::string& origin, bool data, std::vector<std::vector<std::string>>& out) {
    MutexLock lock(mu);
    auto it = store.known().find(origin);
    if (it == store.known().end()) return false;
    const Known& k = it->second;
    uint64_t now = now_ms();
    bool own_one = origin == store.own_origin();
    encode_report(k.state, own_one ? now : k.state.heartbeat,
                  own_one || now < k.last_heard_ms ? 0 : now - k.last_heard_ms, data, out);
    return true;
}

MoreMessages Service::Impl::transfer(std::shared_ptr<const tsig::Key> key, uint16_t id, uint16_t qtype,
                                     const std::string& req_mac, std::optional<uint32_t> known_serial,
                                     const std::map<std::string, Held>& have, bool own_only) {
    std::vector<TransferWriter::Origin> origins;
    uint32_t generation;
    {
        MutexLock lock(mu);
        generation = store.generation();
        // A serial from the future (another incarnation of ours) gets everything.
        bool since = known_serial.has_value();
        uint32_t serial = known_serial.value_or(0);
        if (since && newer(serial, generation)) since = false;
        const std::string own_origin = own.origin();
        for (const auto& [origin, k] : store.known()) {
            // Data only for the origins that changed after the puller's serial and that it does not say it holds.
            bool data = !since || newer(k.changed_generation, serial);
            auto it = have.find(origin);
            if (it != have.end() && it->second.incarnation == k.state.incarnation &&
                it->second.version >= k.state.version)
                data = false;
            if (own_only && origin != own_origin) data = false;  // a heartbeat: the puller asks its origin
            origins.push_back({origin, data});
        }
    }
    auto writer =
        std::make_shared<TransferWriter>(*this, std::move(key), id, qtype, req_mac, generation, std::move(origins));
    return [writer](std::vector<uint8_t>& next) { return writer->next(next); };
}

}  // namespace glbd::sync
