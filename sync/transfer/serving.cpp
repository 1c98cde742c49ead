// sync/transfer/serving (TCP thread): a peer's signed request for `_glbd.` (AXFR, IXFR, SOA) or its NOTIFY,
// answered from the store.
#include "sync/transfer/serving.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <ctime>

#include "resolver/wire/consts.hpp"
#include "resolver/wire/text.hpp"
#include "resolver/wire/wire.hpp"

namespace glbd::sync {

Service::Auth Serving::verify(const tsig::Key& key, const uint8_t* wire, size_t len, uint64_t now_s, std::string* mac) {
    switch (tsig::verify(wire, len, key, "", false, now_s, mac)) {
        case tsig::Status::ok: return Auth::ok;
        case tsig::Status::unsigned_: return Auth::unsigned_;
        case tsig::Status::badkey: return Auth::badkey;
        case tsig::Status::badtime: return Auth::badtime;
        default: return Auth::badsig;
    }
}

Service::Handled Serving::handle(const uint8_t* msg, size_t len, const geo::Address& from,
                                 std::vector<std::vector<uint8_t>>& out, MoreMessages& more) {
    SyncRequest req;
    if (!core_.networked || !parse_sync_request(msg, len, req)) return Handled::not_ours;
    const bool notify = req.opcode == wire::opcode::NOTIFY;
    std::string peer = from.str();
    std::string req_mac;
    auto key = core_.current_key();
    if (!key) return Handled::not_ours;
    Auth a = verify(*key, msg, len, static_cast<uint64_t>(std::time(nullptr)), &req_mac);
    if (a == Auth::ok && !first_use(req_mac)) a = Auth::replay;
    if (a != Auth::ok) {
        reject(a, notify ? "NOTIFY" : "transfer", peer);
        out.push_back(error_response(req, a == Auth::unsigned_ ? wire::rcode::REFUSED : wire::rcode::NOTAUTH));
        return Handled::rejected;
    }
    bool member;
    {
        MutexLock lock(core_.mu);
        member = core_.member_addresses.count(from) > 0;
        if (member && !notify) core_.pulled_at[from] = core_.now();  // acknowledges our last change (resend_change)
    }
    if (notify) {
        core_.counters.notifies_received.fetch_add(1);
        Message resp(req.id,
                     static_cast<uint16_t>(wire::flag::QR | wire::opcode_bits(wire::opcode::NOTIFY) | wire::flag::AA));
        resp.question(req.qtype);
        out.push_back(resp.finish());
        tsig::sign(out.back(), *key, req_mac, false, static_cast<uint64_t>(std::time(nullptr)));
        {
            MutexLock lock(core_.mu);
            core_.pull_now.insert(from);
        }
        core_.wake_up();
    } else if (req.qtype == wire::type::AXFR || req.qtype == wire::type::IXFR || req.qtype == wire::type::SOA) {
        core_.counters.served.fetch_add(1);
        // An IXFR with the generation the puller already has gets heartbeats only (see transfer()).
        std::optional<uint32_t> known = req.qtype == wire::type::IXFR ? req.known_serial : std::nullopt;
        more = transfer(key, req.id, req.qtype, req_mac, known, req);
    } else {
        out.push_back(error_response(req, wire::rcode::REFUSED));
    }
    return member ? Handled::answered_member : Handled::answered;
}

// Whether a verified request's MAC is new (then it is remembered): a signed request sent again as it was,
// from anywhere, is a replay.
bool Serving::first_use(const std::string& mac) {
    uint64_t now = core_.now();
    MutexLock lock(macs_mu_);
    while (!mac_order_.empty() && (mac_order_.size() >= kMaxMacs || now - mac_order_.front().first > kMacKeepMs)) {
        seen_macs_.erase(mac_order_.front().second);
        mac_order_.pop_front();
    }
    if (!seen_macs_.insert(mac).second) return false;
    mac_order_.emplace_back(now, mac);
    return true;
}

// A request that failed TSIG: counted by reason and logged (throttled per source and reason).
void Serving::reject(Auth a, const char* what, const std::string& peer) {
    const auto key = core_.current_key();
    const std::string name = key ? wire::wire_to_name(key->name) : std::string("?");
    const std::string why = a == Auth::unsigned_ ? "unsigned"
                            : a == Auth::badkey
                                ? "unknown key (ours is " + name + "): peers.key must be the same on every glbd"
                            : a == Auth::badsig ? "bad signature: the key name is ours (" + name +
                                                      ") but not the secret: peers.key must be the same on every glbd"
                            : a == Auth::replay ? "a replayed signature"
                                                : "stale signature (the clocks differ by more than TSIG's 5 minutes)";
    SyncCounters& counters = core_.counters;
    (a == Auth::unsigned_ ? counters.rejected_unsigned
     : a == Auth::badkey  ? counters.rejected_badkey
     : a == Auth::badsig  ? counters.rejected_badsig
     : a == Auth::replay  ? counters.rejected_replay
                          : counters.rejected_badtime)
        .fetch_add(1);
    uint64_t left_out = 0;
    bool log = false;
    {
        MutexLock lock(reject_mu_);
        log = reject_log_.allow(peer + " " + why, core_.now(), &left_out);
    }
    if (log) {
        spdlog::warn("sync: rejected {} request from {}: {}{}", what, peer, why,
                     left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
    }
}

namespace {

// A transfer being written (TCP thread), one message per call as the connection takes them. Each origin's
// record is written when its turn comes, under the lock, from the store as it is then, with its data as
// encoded once for that state (encode_origin); the serial (the store's generation when the request came) is
// in the first SOA. A change during the transfer is either in it or after that serial, so the puller's next
// IXFR brings it; each report is whole at its own version, the one thing a puller relies on. Holds one
// message, one origin's record and a reference to its data.
class TransferWriter {
public:
    static constexpr uint16_t kAnswerFlags = wire::flag::QR | wire::flag::AA;
    struct Origin {
        std::string name;
        bool data;
        std::optional<Held> held;  // what the puller holds of it, when it reads reports in parts
    };
    TransferWriter(Serving& serving, std::shared_ptr<const tsig::Key> key, uint16_t id, uint16_t qtype,
                   std::string req_mac, uint32_t generation, std::vector<Origin> origins)
        : serving_(serving),
          key_(std::move(key)),
          id_(id),
          qtype_(qtype),
          prior_(std::move(req_mac)),
          generation_(generation),
          origins_(std::move(origins)),
          msg_(id, kAnswerFlags),
          now_s_(static_cast<uint64_t>(std::time(nullptr))) {
        msg_.reserve(kMessageRoom);
        msg_.question(qtype_);
        msg_.soa(generation_);
        if (qtype_ != wire::type::SOA) head_ = encode_header(serving_.own_origin_name()), head_due_ = header_ = true;
    }

    // The next message; false when it is the last.
    bool next(std::vector<uint8_t>& out) {
        if (done_) return false;
        while (qtype_ != wire::type::SOA) {
            if (!head_due_ && (!data_ || record_ == data_->records.size())) {
                if (!refill()) break;
                continue;
            }
            if (msg_.size() > kMessageBudget) {
                flush(out);
                return true;
            }
            if (head_due_) {
                write_head();
            } else {
                const auto& r = data_->records[record_];
                size_t begin = record_ ? data_->records[record_ - 1].end : 0;
                msg_.txt_wire(owner(r.host ? 'h' : 'v', ++record_), {},
                              std::string_view(data_->rdata).substr(begin, r.end - begin));
            }
        }
        if (qtype_ != wire::type::SOA) msg_.soa(generation_);
        flush(out);
        done_ = true;
        return false;
    }

private:
    // The record of the next origin still in the store (one that was forgotten meanwhile is left out).
    bool refill() {
        while (next_origin_ < origins_.size()) {
            const Origin& o = origins_[next_origin_++];
            if (serving_.encode_origin(o.name, o.data, o.held, head_, data_)) {
                head_due_ = true, record_ = 0;
                return true;
            }
        }
        return false;
    }
    // The transfer's header at the apex, or an origin's record (o<N>) with its data fields.
    void write_head() {
        head_due_ = false;
        if (header_) {
            header_ = false;
            msg_.txt_wire(sync_zone_wire(), head_, {});
            return;
        }
        ++origin_n_, named_at_ = 0;
        msg_.txt_wire(owner(0, 0), head_, data_ ? std::string_view(data_->origin_fields) : std::string_view());
    }
    // Owners name the records for people reading a transfer: each origin as o<N>, its hosts (h<M>) and other
    // records (v<M>) below it. `kind` 0: the origin's own. Once a message holds the origin's name, the owners
    // after it point to it (RFC 1035 4.1.4): 8 bytes less of the ~60 a host takes, each hashed twice by TSIG.
    std::string_view owner(char kind, size_t item) {
        char* p = owner_;
        auto label = [&p](char first, size_t n) {
            char* start = p++;
            *p++ = first;
            p = std::to_chars(p, p + 20, n).ptr;
            *start = static_cast<char>(p - start - 1);
        };
        if (kind) label(kind, item);
        if (named_at_ != 0) {
            wire::Writer::put16(reinterpret_cast<uint8_t*>(p),
                                static_cast<uint16_t>(wire::kCompressionPointer | named_at_));
            p += 2;
            return {owner_, static_cast<size_t>(p - owner_)};
        }
        if (size_t at = msg_.size() + static_cast<size_t>(p - owner_); at <= wire::kMaxPointerOffset) named_at_ = at;
        label('o', static_cast<size_t>(origin_n_));
        const std::string& zone = sync_zone_wire();
        p = std::copy(zone.begin(), zone.end(), p);
        return {owner_, static_cast<size_t>(p - owner_)};
    }
    void flush(std::vector<uint8_t>& out) {
        out = msg_.finish();
        prior_ = tsig::sign(out, *key_, prior_, !first_, now_s_);
        first_ = false;
        msg_ = Message(id_, kAnswerFlags);
        msg_.reserve(kMessageRoom);
        named_at_ = 0;  // a pointer reaches within its own message only
    }

    Serving& serving_;
    std::shared_ptr<const tsig::Key> key_;
    uint16_t id_, qtype_;
    std::string prior_;
    uint32_t generation_;
    std::vector<Origin> origins_;
    size_t next_origin_ = 0;
    Message msg_;
    uint64_t now_s_;
    std::vector<std::string> head_;            // the header, then each origin's record
    std::shared_ptr<const EncodedData> data_;  // that origin's data, when it is sent
    size_t record_ = 0;                        // data_'s next record
    bool head_due_ = false, header_ = false;   // head_ is due; it is the transfer's header
    int origin_n_ = 0;
    size_t named_at_ = 0;     // where msg_ names origin origin_n_ (0: not in this message yet)
    char owner_[2 * 22 + 8];  // two labels of a letter and up to 20 digits, and `_glbd.`
    bool first_ = true, done_ = false;
};

}  // namespace

std::string Serving::own_origin_name() const {
    MutexLock lock(core_.mu);
    return core_.own.origin();
}

bool Serving::encode_origin(const std::string& origin, bool data, const std::optional<Held>& held,
                            std::vector<std::string>& record, std::shared_ptr<const EncodedData>& encoded) {
    MutexLock lock(core_.mu);
    auto it = core_.store.known().find(origin);
    if (it == core_.store.known().end()) return false;
    const Known& k = it->second;
    uint64_t now = core_.now();
    bool own_one = origin == core_.store.own_origin();
    record = origin_fields(k.state, own_one ? now : k.state.heartbeat,
                           own_one || now < k.last_heard_ms ? 0 : now - k.last_heard_ms);
    encoded.reset();
    if (!data) {
        record.emplace_back(kNoData);
        return true;
    }
    auto [at, fresh] = served_data_.try_emplace(origin);
    Served& served = at->second;
    if (fresh || served.generation != k.changed_generation) {
        served = {k.changed_generation, nullptr, nullptr};  // each encoding made when first sent
        const auto& known = core_.store.known();
        if (served_data_.size() > known.size()) {  // drop the forgotten origins' data
            std::erase_if(served_data_, [&known](const auto& e) { return !known.contains(e.first); });
        }
    }
    // The outside verdicts alone, to a puller that holds the rest (this life, at its base version or later).
    if (held && held->incarnation == k.state.incarnation && held->version >= k.state.base() &&
        held->version < k.state.version) {
        if (!served.outside) served.outside = encode_outside_data(k.state);
        encoded = served.outside;
        return true;
    }
    if (!served.data) served.data = encode_data(k.state);
    encoded = served.data;
    return true;
}

MoreMessages Serving::transfer(std::shared_ptr<const tsig::Key> key, uint16_t id, uint16_t qtype,
                               const std::string& req_mac, std::optional<uint32_t> known_serial,
                               const SyncRequest& req) {
    std::vector<TransferWriter::Origin> origins;
    uint32_t generation;
    {
        MutexLock lock(core_.mu);
        generation = core_.store.generation();
        // A serial from the future (another incarnation of ours) gets everything.
        bool since = known_serial.has_value();
        uint32_t serial = known_serial.value_or(0);
        if (since && newer(serial, generation)) since = false;
        const std::string own_origin = core_.own.origin();
        for (const auto& [origin, k] : core_.store.known()) {
            // Data only for the origins that changed after the puller's serial and that it does not say it holds.
            bool data = !since || newer(k.changed_generation, serial);
            auto it = req.have.find(origin);
            if (it != req.have.end() && it->second.incarnation == k.state.incarnation &&
                it->second.version >= k.state.version)
                data = false;
            if (req.own_only && origin != own_origin) data = false;  // a heartbeat: the puller asks its origin
            std::optional<Held> held;
            if (req.takes_parts && it != req.have.end()) held = it->second;
            origins.push_back({origin, data, held});
        }
    }
    auto writer =
        std::make_shared<TransferWriter>(*this, std::move(key), id, qtype, req_mac, generation, std::move(origins));
    return [writer](std::vector<uint8_t>& next) { return writer->next(next); };
}

}  // namespace glbd::sync
