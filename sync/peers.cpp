#include "sync/peers.hpp"

#include <malloc.h>

#include "resolver/wire.hpp"
#include "sync/mutex.hpp"
#include "sync/state_file.hpp"
#include "sync/tsig.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <uv.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <optional>
#include <random>
#include <thread>

#include <ldns/ldns.h>  // last: it defines a `bool` macro

namespace glbd::sync {

uint64_t now_ms() {
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
}

bool parse_transfer_answers(const uint8_t* m, size_t len, std::vector<std::vector<std::string>>& txts, int& soas,
                   uint32_t& serial) {
    if (len < 12) return false;
    unsigned qd = wire::get16(m + 4), an = wire::get16(m + 6);
    size_t pos = 12;
    for (unsigned i = 0; i < qd; ++i) {
        pos = wire::skip_name(m, len, pos);
        if (pos == 0 || pos + 4 > len) return false;
        pos += 4;
    }
    for (unsigned i = 0; i < an; ++i) {
        pos = wire::skip_name(m, len, pos);
        if (pos == 0 || pos + 10 > len) return false;
        uint16_t type = wire::get16(m + pos);
        size_t rdlen = wire::get16(m + pos + 8), rd = pos + 10;
        pos = rd + rdlen;
        if (pos > len) return false;
        if (type == LDNS_RR_TYPE_SOA) {
            size_t p = wire::skip_name(m, pos, rd);
            p = p ? wire::skip_name(m, pos, p) : 0;
            if (p == 0 || p + 20 > pos) return false;
            serial = wire::get32(m + p);
            ++soas;
        } else if (type == LDNS_RR_TYPE_TXT) {
            std::vector<std::string> strings;
            for (size_t p = rd; p < pos;) {
                size_t n = m[p];
                if (p + 1 + n > pos) return false;
                strings.emplace_back(reinterpret_cast<const char*>(m + p + 1), n);
                p += 1 + n;
            }
            txts.push_back(std::move(strings));
        }
    }
    return true;
}

namespace {

constexpr size_t kMaxStateBytes = 16u << 20;  // a peer sending more is cut off
constexpr size_t kMessageBudget = 32000;      // split transfers into messages of about this size
constexpr uint16_t kOpNotify = 4;

using PktPtr = std::unique_ptr<ldns_pkt, void (*)(ldns_pkt*)>;
PktPtr make_pkt(ldns_pkt* p) { return PktPtr(p, ldns_pkt_free); }

std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (s.empty() || s.back() != '.') s += '.';
    return s;
}

std::string rdf_text(const ldns_rdf* r) {
    char* s = ldns_rdf2str(r);
    std::string out = s ? s : "";
    free(s);
    return out;
}

bool is_sync_name(const ldns_rdf* name) { return lower(rdf_text(name)) == kSyncZone; }

std::string addr_text(const sockaddr_storage& ss) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (ss.ss_family == AF_INET) {
        auto* v4 = reinterpret_cast<const sockaddr_in*>(&ss);
        inet_ntop(AF_INET, &v4->sin_addr, buf, sizeof buf);
        return std::string(buf) + ":" + std::to_string(ntohs(v4->sin_port));
    }
    auto* v6 = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &v6->sin6_addr, buf, sizeof buf);
    std::string out = "[";  // appends: GCC 12 -O3 warns falsely (-Wrestrict) on "[" + std::string
    out.append(buf).append("]:").append(std::to_string(ntohs(v6->sin6_port)));
    return out;
}

std::string ip_of(const std::string& addr) {  // "1.2.3.4:53" / "[::1]:53" -> the address part
    if (!addr.empty() && addr[0] == '[') return addr.substr(1, addr.find(']') - 1);
    return addr.substr(0, addr.rfind(':'));
}

std::string geo_ip(const geo::Address& a) {
    char buf[INET6_ADDRSTRLEN] = {};
    inet_ntop(a.family == 4 ? AF_INET : AF_INET6, a.bytes.data(), buf, sizeof buf);
    return buf;
}

// A DNS message written straight to wire: header, an optional `_glbd.` question, answer records.
class Message {
public:
    Message(uint16_t id, uint16_t flags) {
        put16(id), put16(flags), put16(0), put16(0), put16(0), put16(0);
    }
    void question(uint16_t qtype) {
        name(kSyncZone), put16(qtype), put16(1);
        qd_ = 1;
    }
    void soa(uint32_t serial) {
        std::string rd = wire("glbd.") + wire("hostmaster.glbd.");
        for (uint32_t v : {serial, 1u, 1u, 1u, 1u}) {
            for (int sft = 24; sft >= 0; sft -= 8) rd.push_back(static_cast<char>(v >> sft));
        }
        rr(kSyncZone, LDNS_RR_TYPE_SOA, rd);
    }
    void txt(const std::string& owner, const std::vector<std::string>& strings) {
        std::string rd;
        for (const auto& s : strings) {
            size_t n = std::min<size_t>(s.size(), 255);
            rd.push_back(static_cast<char>(n));
            rd.append(s, 0, n);
        }
        rr(owner, LDNS_RR_TYPE_TXT, rd);
    }
    [[nodiscard]] size_t size() const { return b_.size(); }
    std::vector<uint8_t> finish() {
        b_[4] = 0, b_[5] = static_cast<uint8_t>(qd_);
        b_[6] = static_cast<uint8_t>(an_ >> 8), b_[7] = static_cast<uint8_t>(an_);
        return b_;
    }

private:
    static std::string wire(const std::string& n) { return conf::name_to_wire(n).value_or(std::string(1, '\0')); }
    void put16(uint16_t v) { b_.push_back(static_cast<uint8_t>(v >> 8)), b_.push_back(static_cast<uint8_t>(v)); }
    void name(const std::string& n) {
        std::string w = wire(n);
        b_.insert(b_.end(), w.begin(), w.end());
    }
    void rr(const std::string& owner, uint16_t type, const std::string& rdata) {
        name(owner), put16(type), put16(1), put16(0), put16(0), put16(static_cast<uint16_t>(rdata.size()));
        b_.insert(b_.end(), rdata.begin(), rdata.end());
        ++an_;
    }
    std::vector<uint8_t> b_;
    unsigned qd_ = 0, an_ = 0;
};


}  // namespace

struct Service::Impl {
    // Written only by reconfigure() on the control thread while the sync thread is stopped; read by the
    // control and sync threads. The TCP thread reads none of it (it takes the key through current_key()).
    conf::Config config;
    std::atomic<bool> networked{false};
    std::function<void()> on_change;

    mutable Mutex mu;
    std::shared_ptr<const tsig::Key> sync_key GLBD_GUARDED_BY(mu);  // swapped whole by a reload
    Store store GLBD_GUARDED_BY(mu);
    InstanceState own GLBD_GUARDED_BY(mu);
    std::map<std::string, PeerStatus> peer_status GLBD_GUARDED_BY(mu);  // by address
    std::set<std::string> self_addresses GLBD_GUARDED_BY(mu);           // members that turned out to be this instance
    std::set<std::string> pull_now GLBD_GUARDED_BY(mu);                 // IPs that sent NOTIFY
    bool notify_pending GLBD_GUARDED_BY(mu) = false;
    bool own_hosts_set GLBD_GUARDED_BY(mu) = false;
    std::map<std::string, bool> last_alive GLBD_GUARDED_BY(mu);
    std::set<std::string> warned GLBD_GUARDED_BY(mu);  // origin+version already warned about foreign hosts
    bool save_pending GLBD_GUARDED_BY(mu) = false;
    bool stopping GLBD_GUARDED_BY(mu) = false;  // set by stop(), read by the sync thread when woken

    SyncCounters counters;  // atomics
    bool running = false;   // control thread: the sync thread is running

    // The sync thread's own: its loop, timers and exchanges (the control thread touches them only in
    // start() and stop(), before the thread starts and after it is joined).
    uv_loop_t loop{};
    uv_async_t wake{};
    uv_timer_t pull_timer{}, live_timer{}, save_timer{};
    uint64_t last_save_ms = 0, last_save_cost_ms = 0;
    std::thread thread;
    bool closing = false;             // the stop was seen: no new exchange
    std::set<std::string> in_flight;  // addresses with an exchange under way
    struct Exchange;
    std::set<Exchange*> exchanges;
    std::vector<std::string> members;  // resolved addresses, refreshed each round
    std::map<std::string, uint32_t> last_generation;  // per peer address: the serial last received
    int resolving = 0;

    Impl(const conf::Config& c, std::function<void()> cb) : config(c), on_change(std::move(cb)) {
        networked = config.peers.has_value();
        MutexLock lock(mu);
        if (networked) sync_key = std::make_shared<const tsig::Key>(tsig::Key::from(config.peers->key.name, config.peers->key.secret));
        own.cluster = config.cluster_id;
        own.instance = config.instance;
        uint64_t now = now_ms();
        own.version = now;
        own.heartbeat = now;
        // Serials start anywhere, so that a peer's memory of our last generation cannot match after a
        // restart. Set first: what is loaded next is stamped with generations of this counter.
        store.set_generation(static_cast<uint32_t>(std::random_device{}()) | 1u);
        load_state_dir(now);
        store.set_own(own, now);
    }

    // ---- stateDir
    std::string state_path() const { return config.state_dir + "/state.json"; }

    void load_state_dir(uint64_t now) GLBD_REQUIRES(mu) {
        if (config.state_dir.empty()) return;
        std::ifstream in(state_path());
        if (!in) return;
        try {
            std::vector<InstanceState> origins = read_state_file(in);
            size_t n = 0;
            for (auto& s : origins) {
                if (s.origin() == own.origin()) {
                    // Our own overrides survive a restart; versions keep growing.
                    own.overrides = s.overrides;
                    own.version = std::max(own.version, s.version + 1);
                    continue;
                }
                store.load(s, now);
                ++n;
            }
            spdlog::info("sync: loaded {} known instance(s) from {}", n, state_path());
        } catch (const std::exception& e) {
            spdlog::warn("sync: ignoring {}: {}", state_path(), e.what());
        }
    }

    // stateDir is written on the sync thread, at most every max(1 s, 4 x the last write's cost): at
    // 10,000 hosts x 20 clusters one write is about a second of work. The known states are copied
    // under the lock; serializing and writing happen outside it. A stop writes what is pending.
    void request_save() GLBD_REQUIRES(mu) {
        if (config.state_dir.empty()) return;
        save_pending = true;
        if (!networked) save_locked();  // no sync thread: write now
    }

    void schedule_save() {  // sync thread
        if (uv_is_active(reinterpret_cast<uv_handle_t*>(&save_timer))) return;
        {
            MutexLock lock(mu);
            if (!save_pending) return;
        }
        uv_update_time(&loop);
        uint64_t now = uv_now(&loop);
        uint64_t gap = std::max<uint64_t>(1000, 4 * last_save_cost_ms);
        uint64_t delay = last_save_ms + gap > now ? last_save_ms + gap - now : 0;
        uv_timer_start(&save_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->save_now(); }, delay, 0);
    }

    void save_now() {  // sync thread
        uv_update_time(&loop);
        uint64_t start = uv_now(&loop);
        std::vector<InstanceState> states;
        {
            MutexLock lock(mu);
            if (!save_pending) return;
            save_pending = false;
            states = known_states();
        }
        write_state(states);
        states = {};
        malloc_trim(0);  // a large view's copy is hundreds of MB, gone now: give it back
        uv_update_time(&loop);
        last_save_ms = uv_now(&loop);
        last_save_cost_ms = last_save_ms - start;
    }

    void save_locked() GLBD_REQUIRES(mu) {
        save_pending = false;
        write_state(known_states());
    }

    std::vector<InstanceState> known_states() const GLBD_REQUIRES(mu) {
        std::vector<InstanceState> out;
        out.reserve(store.known().size());
        for (const auto& [o, k] : store.known()) out.push_back(k.state);
        return out;
    }

    // {"saved": ms, "origins": [...]}, one origin's JSON at a time.
    void write_state(const std::vector<InstanceState>& states) const {
        std::error_code ec;
        std::filesystem::create_directories(config.state_dir, ec);
        std::string tmp = state_path() + ".tmp";
        {
            std::ofstream out(tmp, std::ios::trunc);
            write_state_file(out, states, now_ms());
            if (!out) {
                spdlog::warn("sync: cannot write {}", tmp);
                return;
            }
        }
        std::filesystem::rename(tmp, state_path(), ec);
        if (ec) spdlog::warn("sync: cannot rename {}: {}", tmp, ec.message());
    }

    // ---- own state (control thread)
    void set_own_hosts(std::vector<HostEntry> hosts) {
        {
            MutexLock lock(mu);
            bool same = hosts.size() == own.hosts.size() &&
                        std::equal(hosts.begin(), hosts.end(), own.hosts.begin(), [](const HostEntry& a, const HostEntry& b) {
                            return a.host == b.host && a.ttl == b.ttl && a.load_balancing == b.load_balancing &&
                                   a.endpoints.size() == b.endpoints.size() &&
                                   std::equal(a.endpoints.begin(), a.endpoints.end(), b.endpoints.begin(),
                                              [](const EndpointState& x, const EndpointState& y) {
                                                  return x.target == y.target && x.healthy == y.healthy;
                                              });
                        });
            if (same && own_hosts_set) return;
            own_hosts_set = true;
            own.hosts = std::move(hosts);
            bump_own();
        }
        wake_up();
    }

    std::string set_override(const std::string& target, const std::string& state) {
        {
            MutexLock lock(mu);
            if (auto err = sync::set_override(own.overrides, target, state, now_ms()); !err.empty()) return err;
            bump_own();
        }
        wake_up();
        return "";
    }

    void bump_own() GLBD_REQUIRES(mu) {
        uint64_t now = now_ms();
        own.version = std::max(own.version + 1, now);
        own.heartbeat = now;
        store.set_own(own, now);
        notify_pending = true;
        request_save();
    }

    void wake_up() {
        if (running) uv_async_send(&wake);
    }

    uint64_t dead_after() const { return networked ? static_cast<uint64_t>(config.peers->dead_after.count()) : UINT64_MAX / 4; }

    // ---- serving (TCP thread)
    static Auth verify(const tsig::Key& key, const uint8_t* wire, size_t len, uint64_t now_s, std::string* mac) {
        switch (tsig::verify(wire, len, key, "", false, now_s, mac)) {
            case tsig::Status::ok: return Auth::ok;
            case tsig::Status::unsigned_: return Auth::unsigned_;
            case tsig::Status::badkey: return Auth::badkey;
            case tsig::Status::badtime: return Auth::badtime;
            default: return Auth::badsig;
        }
    }

    bool handle(const uint8_t* msg, size_t len, const geo::Address& from, std::vector<std::vector<uint8_t>>& out) {
        if (!networked || len < 12) return false;
        uint16_t opcode = (msg[2] >> 3) & 0xf;
        ldns_pkt* raw = nullptr;
        if (ldns_wire2pkt(&raw, msg, len) != LDNS_STATUS_OK) return false;
        PktPtr req = make_pkt(raw);
        if (ldns_pkt_qr(req.get()) || ldns_rr_list_rr_count(ldns_pkt_question(req.get())) != 1) return false;
        const ldns_rr* q = ldns_rr_list_rr(ldns_pkt_question(req.get()), 0);
        if (!is_sync_name(ldns_rr_owner(q))) return false;
        if (opcode != 0 && opcode != kOpNotify) return false;
        std::string peer = geo_ip(from);
        std::string req_mac;
        auto key = current_key();
        if (!key) return false;
        Auth a = verify(*key, msg, len, static_cast<uint64_t>(std::time(nullptr)), &req_mac);
        if (a != Auth::ok) {
            const char* why = a == Auth::unsigned_ ? "unsigned" : a == Auth::badkey ? "unknown key" : a == Auth::badsig ? "bad signature" : "stale signature";
            (a == Auth::unsigned_ ? counters.rejected_unsigned : a == Auth::badkey ? counters.rejected_badkey
             : a == Auth::badsig ? counters.rejected_badsig : counters.rejected_badtime).fetch_add(1);
            spdlog::warn("sync: rejected {} request from {}: {}", opcode == kOpNotify ? "NOTIFY" : "transfer", peer, why);
            out.push_back(error_response(req.get(), a == Auth::unsigned_ ? LDNS_RCODE_REFUSED : LDNS_RCODE_NOTAUTH));
            return true;
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
            // The versions the puller already holds ("have=cluster/instance@version"): those need no data.
            std::map<std::string, uint64_t> have;
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
                    have[v.substr(5, at - 5)] = std::strtoull(v.c_str() + at + 1, nullptr, 10);
                }
            }
            transfer(*key, ldns_pkt_id(req.get()), ldns_rr_get_type(q), req_mac, known_serial, have, out);
        } else {
            out.push_back(error_response(req.get(), LDNS_RCODE_REFUSED));
        }
        return true;
    }

    std::vector<uint8_t> error_response(const ldns_pkt* req, ldns_pkt_rcode rcode) {
        auto resp = make_pkt(ldns_pkt_new());
        ldns_pkt_set_id(resp.get(), ldns_pkt_id(req));
        ldns_pkt_set_qr(resp.get(), true);
        ldns_pkt_set_opcode(resp.get(), ldns_pkt_get_opcode(req));
        ldns_pkt_set_rcode(resp.get(), rcode);
        ldns_pkt_push_rr(resp.get(), LDNS_SECTION_QUESTION, ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(req), 0)));
        return wire_of(resp.get());
    }

    static std::vector<uint8_t> wire_of(const ldns_pkt* p) {
        uint8_t* w = nullptr;
        size_t n = 0;
        std::vector<uint8_t> out;
        if (ldns_pkt2wire(&w, p, &n) == LDNS_STATUS_OK) out.assign(w, w + n);
        free(w);
        return out;
    }

    // What to send a puller that has our generation `since` (none: everything): data only for the
    // origins that changed after it, heartbeats for all.
    std::vector<Report> reports_now(std::optional<uint32_t> since) GLBD_REQUIRES(mu) {
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
    void transfer(const tsig::Key& key, uint16_t id, uint16_t qtype, const std::string& req_mac, std::optional<uint32_t> known_serial,
                  const std::map<std::string, uint64_t>& have, std::vector<std::vector<uint8_t>>& out) GLBD_EXCLUDES(mu) {
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
                if (it != have.end() && it->second >= r.state.version) r.has_data = false;
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

    // A reload: new members, key, zones or intervals; what is known stays.
    void reconfigure(const conf::Config& c) {
        stop();
        MutexLock lock(mu);
        config = c;
        networked = config.peers.has_value();
        sync_key = networked ? std::make_shared<const tsig::Key>(tsig::Key::from(config.peers->key.name, config.peers->key.secret))
                             : nullptr;
        self_addresses.clear();  // members are resolved again by the first round; keep the old ones till then
        stopping = false;
        closing = false;
    }

    std::shared_ptr<const tsig::Key> current_key() const GLBD_EXCLUDES(mu) {
        MutexLock lock(mu);
        return sync_key;
    }

    // ---- the sync loop
    void start() {
        if (!networked) return;
        uv_loop_init(&loop);
        uv_async_init(&loop, &wake, [](uv_async_t* a) { static_cast<Impl*>(a->data)->on_wake(); });
        wake.data = this;
        uv_timer_init(&loop, &pull_timer);
        uv_timer_init(&loop, &live_timer);
        uv_timer_init(&loop, &save_timer);
        pull_timer.data = live_timer.data = save_timer.data = this;
        auto interval = static_cast<uint64_t>(config.peers->sync_interval.count());
        uv_timer_start(&pull_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->round(); }, 0, interval);
        uv_timer_start(&live_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->check_liveness(); }, 100, 100);
        running = true;
        schedule_save();  // what changed before the loop ran
        thread = std::thread([this] { uv_run(&loop, UV_RUN_DEFAULT); });
    }

    void stop() {
        if (!running) return;
        {
            MutexLock lock(mu);
            stopping = true;
        }
        uv_async_send(&wake);
        thread.join();
        uv_loop_close(&loop);
        running = false;
    }

    void on_wake() {
        bool stop_now, notify;
        std::set<std::string> now_pull;
        {
            MutexLock lock(mu);
            stop_now = stopping;
            if (stop_now) closing = true;
            notify = notify_pending;
            notify_pending = false;
            now_pull.swap(pull_now);
        }
        if (stop_now) {
            save_now();
            auto live = exchanges;
            for (Exchange* x : live) finish(x, "stopping");
            uv_walk(&loop, [](uv_handle_t* h, void*) {
                if (!uv_is_closing(h)) uv_close(h, nullptr);
            }, nullptr);
            return;
        }
        if (notify && members.empty()) {  // not resolved yet: the first round sends it
            MutexLock lock(mu);
            notify_pending = true;
        } else if (notify) {
            for (const auto& m : members) exchange(m, true);
        }
        for (const auto& ip : now_pull) {
            bool matched = false;
            for (const auto& m : members) {
                if (ip_of(m) == ip) exchange(m, false), matched = true;
            }
            if (!matched) {
                for (const auto& m : members) exchange(m, false);
            }
        }
        schedule_save();
    }

    // Every syncInterval: resolve the members again, then pull from each.
    void round() {
        if (!resolving) resolve_members();
        for (const auto& m : members) exchange(m, false);
        bool notify;
        {
            MutexLock lock(mu);
            notify = notify_pending;
            notify_pending = false;
        }
        if (notify) {
            for (const auto& m : members) exchange(m, true);
        }
    }

    bool is_own_listen(const std::string& addr) const {
        return std::any_of(config.listen.begin(), config.listen.end(), [&](const conf::SockAddr& l) { return l.str() == addr; });
    }

    void resolve_members() {
        auto* fresh = new std::set<std::string>;
        auto* pending = new int(0);
        auto finish = [this](std::set<std::string>* set, int* count) {
            if (--*count > 0) return;
            std::vector<std::string> next;
            for (const auto& a : *set) {
                MutexLock lock(mu);
                if (!is_own_listen(a) && !self_addresses.count(a)) next.push_back(a);
            }
            members = std::move(next);
            --resolving;
            delete set;
            delete count;
        };
        ++resolving;
        *pending = 1;  // released below, after every lookup has been started
        for (const auto& m : config.peers->members) {
            unsigned char buf[16];
            if (inet_pton(AF_INET, m.host.c_str(), buf) == 1 || inet_pton(AF_INET6, m.host.c_str(), buf) == 1) {
                fresh->insert(m.str());
                continue;
            }
            struct Req {
                uv_getaddrinfo_t req;
                Impl* impl;
                uint16_t port;
                std::set<std::string>* set;
                int* pending;
                std::function<void(std::set<std::string>*, int*)> finish;
            };
            auto* r = new Req{{}, this, m.port, fresh, pending, finish};
            r->req.data = r;
            ++*pending;
            addrinfo hints{};
            hints.ai_socktype = SOCK_STREAM;
            int rc = uv_getaddrinfo(&loop, &r->req, [](uv_getaddrinfo_t* req, int status, addrinfo* res) {
                auto* rq = static_cast<Req*>(req->data);
                for (addrinfo* ai = status == 0 ? res : nullptr; ai; ai = ai->ai_next) {
                    sockaddr_storage ss{};
                    std::memcpy(&ss, ai->ai_addr, ai->ai_addrlen);
                    if (ss.ss_family == AF_INET) reinterpret_cast<sockaddr_in*>(&ss)->sin_port = htons(rq->port);
                    if (ss.ss_family == AF_INET6) reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port = htons(rq->port);
                    rq->set->insert(addr_text(ss));
                }
                if (status != 0) spdlog::warn("sync: cannot resolve a peer member: {}", uv_strerror(status));
                uv_freeaddrinfo(res);
                rq->finish(rq->set, rq->pending);
                delete rq;
            }, m.host.c_str(), nullptr, &hints);
            if (rc != 0) {
                --*pending;
                delete r;
            }
        }
        finish(fresh, pending);
    }

    void check_liveness() {
        bool changed = false;
        uint64_t now = now_ms();
        {
            MutexLock lock(mu);
            for (const auto& [origin, k] : store.known()) {
                bool alive = store.alive(k, now, dead_after());
                // A first sighting changes nothing: the view that brought the origin judged it the same way.
                auto [it, fresh] = last_alive.try_emplace(origin, alive);
                if (!fresh && it->second != alive) {
                    spdlog::warn("sync: {} is {}", origin, alive ? "alive again" : "dead (not heard for deadAfter)");
                    it->second = alive;
                    changed = true;
                }
            }
        }
        if (changed && on_change) on_change();
    }

    // One TCP exchange with a peer: a transfer of its `_glbd.` zone, or a NOTIFY.
    struct Exchange {
        Impl* impl = nullptr;
        std::string addr;
        bool notify = false;
        uv_tcp_t tcp{};
        uv_connect_t conn{};
        uv_write_t write{};
        uv_timer_t timer{};
        std::vector<uint8_t> out, in;
        std::shared_ptr<const tsig::Key> key;  // the key the request was signed with
        std::string mac;  // the request's, then the previous message's
        int messages = 0, soas = 0, open = 2;
        uint32_t serial = 0;
        size_t total = 0;
        bool done = false;
        std::vector<std::vector<std::string>> records;
    };

    void exchange(const std::string& addr, bool notify) {
        std::string flight = addr + (notify ? "#n" : "#p");
        if (in_flight.count(flight) || closing) return;
        sockaddr_storage ss{};
        std::string ip = ip_of(addr);
        int port = std::stoi(addr.substr(addr.rfind(':') + 1));
        if (uv_ip4_addr(ip.c_str(), port, reinterpret_cast<sockaddr_in*>(&ss)) != 0 &&
            uv_ip6_addr(ip.c_str(), port, reinterpret_cast<sockaddr_in6*>(&ss)) != 0) {
            return;
        }
        in_flight.insert(flight);
        auto* x = new Exchange;
        x->impl = this, x->addr = addr, x->notify = notify;
        exchanges.insert(x);
        // The signed request.
        auto req = make_pkt(ldns_pkt_new());
        ldns_pkt_set_random_id(req.get());
        ldns_rr* q = nullptr;
        ldns_rr_new_question_frm_str(&q, notify ? "_glbd. IN SOA" : "_glbd. IN IXFR", nullptr, nullptr);
        ldns_pkt_push_rr(req.get(), LDNS_SECTION_QUESTION, q);
        if (!notify) {  // the generation we have of this peer (0: none, send everything)
            ldns_rr* have = nullptr;
            std::string text = std::string(kSyncZone) + " 0 IN SOA glbd. hostmaster.glbd. " +
                               std::to_string(last_generation[addr]) + " 1 1 1 1";
            ldns_rr_new_frm_str(&have, text.c_str(), 0, nullptr, nullptr);
            ldns_pkt_push_rr(req.get(), LDNS_SECTION_AUTHORITY, have);
            // And every version we hold, so that the peer sends data only for what we lack.
            ldns_rr* held = ldns_rr_new();
            ldns_rr_set_owner(held, ldns_dname_new_frm_str(kSyncZone));
            ldns_rr_set_type(held, LDNS_RR_TYPE_TXT);
            ldns_rr_set_class(held, LDNS_RR_CLASS_IN);
            {
                MutexLock lock(mu);
                size_t bytes = 0;
                for (const auto& [origin, k] : store.known()) {
                    std::string v = "have=" + origin + "@" + std::to_string(k.state.version);
                    if (v.size() > 255) continue;
                    if ((bytes += v.size() + 1) > 60000) break;  // one record's limit: the rest come as data
                    std::string data(1, static_cast<char>(v.size()));
                    data += v;
                    ldns_rr_push_rdf(held, ldns_rdf_new_frm_data(LDNS_RDF_TYPE_STR, data.size(), data.data()));
                }
            }
            ldns_pkt_push_rr(req.get(), LDNS_SECTION_ADDITIONAL, held);
        }
        if (notify) ldns_pkt_set_opcode(req.get(), LDNS_PACKET_NOTIFY), ldns_pkt_set_aa(req.get(), true);
        uint8_t* raw_wire = nullptr;
        size_t raw_len = 0;
        ldns_pkt2wire(&raw_wire, req.get(), &raw_len);
        std::vector<uint8_t> wire(raw_wire, raw_wire + raw_len);
        free(raw_wire);
        auto key = current_key();
        if (!key) return;
        x->key = key;
        x->mac = tsig::sign(wire, *key, "", false, static_cast<uint64_t>(std::time(nullptr)));
        x->out = {static_cast<uint8_t>(wire.size() >> 8), static_cast<uint8_t>(wire.size())};
        x->out.insert(x->out.end(), wire.begin(), wire.end());
        (notify ? counters.notifies_sent : counters.pulls).fetch_add(1);

        uv_tcp_init(&loop, &x->tcp);
        uv_timer_init(&loop, &x->timer);
        x->tcp.data = x->timer.data = x->conn.data = x->write.data = x;
        auto timeout = std::max<uint64_t>(2000, static_cast<uint64_t>(config.peers->sync_interval.count()) * 2);
        uv_timer_start(&x->timer, [](uv_timer_t* t) { finish(static_cast<Exchange*>(t->data), "timeout"); }, timeout, 0);
        int rc = uv_tcp_connect(&x->conn, &x->tcp, reinterpret_cast<sockaddr*>(&ss), [](uv_connect_t* c, int status) {
            auto* ex = static_cast<Exchange*>(c->data);
            if (ex->done) return;
            if (status != 0) return finish(ex, uv_strerror(status));
            uv_buf_t b = uv_buf_init(reinterpret_cast<char*>(ex->out.data()), static_cast<unsigned>(ex->out.size()));
            uv_write(&ex->write, reinterpret_cast<uv_stream_t*>(&ex->tcp), &b, 1, [](uv_write_t* w, int st) {
                auto* e = static_cast<Exchange*>(w->data);
                if (st != 0 && !e->done) finish(e, uv_strerror(st));
            });
            uv_read_start(reinterpret_cast<uv_stream_t*>(&ex->tcp),
                          [](uv_handle_t*, size_t suggested, uv_buf_t* buf) {
                              buf->base = new char[suggested];
                              buf->len = suggested;
                          },
                          [](uv_stream_t* s, ssize_t n, const uv_buf_t* buf) {
                              auto* e = static_cast<Exchange*>(s->data);
                              if (n > 0 && !e->done) {
                                  e->in.insert(e->in.end(), buf->base, buf->base + n);
                                  e->impl->on_data(e);
                              } else if (n < 0 && !e->done) {
                                  finish(e, n == UV_EOF ? "connection closed before the end" : uv_strerror(static_cast<int>(n)));
                              }
                              delete[] buf->base;
                          });
        });
        if (rc != 0) finish(x, uv_strerror(rc));
    }

    void on_data(Exchange* x) {
        while (!x->done && x->in.size() >= 2) {
            size_t len = static_cast<size_t>(x->in[0] << 8 | x->in[1]);
            if (x->in.size() < 2 + len) break;
            x->total += len;
            if (x->total > kMaxStateBytes) {
                counters.oversized.fetch_add(1);
                spdlog::warn("sync: {} sent more than {} bytes of state: cut off", x->addr, kMaxStateBytes);
                return finish(x, "oversized state");
            }
            std::vector<uint8_t> msg(x->in.begin() + 2, x->in.begin() + 2 + static_cast<long>(len));
            x->in.erase(x->in.begin(), x->in.begin() + 2 + static_cast<long>(len));
            if (msg.size() < 12) return finish(x, "malformed response");
            if ((msg[3] & 0xf) != 0) {
                return finish(x, std::string("peer answered ") + ((msg[3] & 0xf) == 9 ? "NOTAUTH (key mismatch?)" : "an error"));
            }
            std::string mac;
            auto st = tsig::verify(msg.data(), msg.size(), *x->key, x->mac, x->messages > 0, static_cast<uint64_t>(std::time(nullptr)), &mac);
            if (st != tsig::Status::ok) return finish(x, "bad TSIG on the response");
            x->mac = mac;
            ++x->messages;
            if (x->notify) return finish(x, "");
            if (!parse_transfer_answers(msg.data(), msg.size(), x->records, x->soas, x->serial)) return finish(x, "malformed response");
            if (x->soas >= 2) return complete(x);
        }
    }

    bool in_our_zones(const std::string& host) const {
        std::string h = host.rfind("*.", 0) == 0 ? host.substr(2) : host;
        return std::any_of(config.zones.begin(), config.zones.end(), [&](const conf::Zone& z) {
            return h == z.origin || (h.size() > z.origin.size() && h.compare(h.size() - z.origin.size(), z.origin.size(), z.origin) == 0 &&
                                     h[h.size() - z.origin.size() - 1] == '.');
        });
    }

    void complete(Exchange* x) {
        std::string from, error;
        std::vector<Report> reports;
        if (!decode(x->records, from, reports, error)) return finish(x, "malformed state: " + error);
        bool changed = false, need_full = false;
        {
            MutexLock lock(mu);
            peer_status[x->addr].origin = from;
            if (from == own.origin()) {
                self_addresses.insert(x->addr);
                members.erase(std::remove(members.begin(), members.end(), x->addr), members.end());
            }
            uint64_t now = now_ms();
            for (auto& r : reports) {
                auto& hosts = r.state.hosts;
                size_t before = hosts.size();
                hosts.erase(std::remove_if(hosts.begin(), hosts.end(), [&](const HostEntry& h) { return !in_our_zones(h.host); }), hosts.end());
                if (hosts.size() != before && warned.insert(r.state.origin() + "@" + std::to_string(r.state.version)).second) {
                    spdlog::warn("sync: ignored {} host(s) of {} outside our zones", before - hosts.size(), r.state.origin());
                }
                if (!r.has_data) {
                    // Nothing new from this origin since our last pull, unless the peer holds a newer
                    // version than we do (learnt elsewhere, and we missed it): then ask for everything.
                    need_full |= store.merge_heartbeat(r.state, r.age_ms, now, nullptr);
                    continue;
                }
                auto m = store.merge(r.state, r.age_ms, now);
                if (m.data_changed) {
                    changed = true;
                    spdlog::debug("sync: {} version {} from {}", r.state.origin(), r.state.version, x->addr);
                }
            }
            // Relayed news is not announced: each origin announces its own changes, and what travels
            // around a cut link goes with the next pull (one syncInterval).
            if (changed) request_save();
        }
        schedule_save();
        last_generation[x->addr] = need_full ? 0 : x->serial;
        finish(x, "");
        if (changed) {
            uv_async_send(&wake);
            if (on_change) on_change();
        }
    }

    static void finish(Exchange* x, const std::string& error) {
        if (x->done) return;
        x->done = true;
        Impl* impl = x->impl;
        impl->in_flight.erase(x->addr + (x->notify ? "#n" : "#p"));
        {
            MutexLock lock(impl->mu);
            PeerStatus& st = impl->peer_status[x->addr];
            st.address = x->addr;
            st.exchanges++;
            if (error.empty()) {
                if (!st.reachable) spdlog::info("sync: peer {} up", x->addr);
                st.reachable = true;
                st.last_error.clear();
                st.last_ok_ms = now_ms();
            } else {
                if (st.reachable || st.failures == 0) spdlog::warn("sync: peer {} down: {} failed: {}", x->addr, x->notify ? "notify" : "pull", error);
                st.reachable = false;
                st.failures++;
                st.last_error = error;
                if (!x->notify) impl->counters.pull_failures.fetch_add(1);
            }
        }
        auto closed = [](uv_handle_t* h) {
            auto* e = static_cast<Exchange*>(h->data);
            if (--e->open == 0) {
                e->impl->exchanges.erase(e);
                delete e;
            }
        };
        uv_timer_stop(&x->timer);
        if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&x->timer))) uv_close(reinterpret_cast<uv_handle_t*>(&x->timer), closed);
        if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(&x->tcp))) uv_close(reinterpret_cast<uv_handle_t*>(&x->tcp), closed);
    }
};

Service::Service(const conf::Config& config, std::function<void()> on_change)
    : impl_(std::make_unique<Impl>(config, std::move(on_change))) {}
Service::~Service() { stop(); }
void Service::start() { impl_->start(); }
void Service::stop() { impl_->stop(); }
void Service::reconfigure(const conf::Config& config) {
    impl_->reconfigure(config);
    impl_->start();
}
void Service::set_own_hosts(std::vector<HostEntry> hosts) { impl_->set_own_hosts(std::move(hosts)); }
std::string Service::set_override(const std::string& target, const std::string& state) {
    return impl_->set_override(target, state);
}
GlobalView Service::view() const {
    MutexLock lock(impl_->mu);
    return impl_->store.view(now_ms(), impl_->dead_after());
}
std::vector<Known> Service::known() const {
    MutexLock lock(impl_->mu);
    std::vector<Known> out;
    for (const auto& [o, k] : impl_->store.known()) out.push_back(k);
    return out;
}
OverrideMap Service::overrides() const {
    MutexLock lock(impl_->mu);
    return impl_->store.overrides();
}
std::vector<PeerStatus> Service::peers() const {
    MutexLock lock(impl_->mu);
    std::vector<PeerStatus> out;
    for (const auto& [a, s] : impl_->peer_status) out.push_back(s);
    return out;
}
const SyncCounters& Service::counters() const { return impl_->counters; }
std::string Service::own_origin() const {
    MutexLock lock(impl_->mu);
    return impl_->own.origin();
}
bool Service::handle(const uint8_t* msg, size_t len, const geo::Address& from, std::vector<std::vector<uint8_t>>& out) {
    return impl_->handle(msg, len, from, out);
}
Service::Auth Service::verify_request(const uint8_t* msg, size_t len, uint64_t now_s) const {
    auto key = impl_->current_key();
    return key ? Impl::verify(*key, msg, len, now_s, nullptr) : Auth::unsigned_;
}

}  // namespace glbd::sync
