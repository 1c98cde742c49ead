#include "sync/service.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <random>
#include <utility>

#include "conf/names.hpp"
#include "resolver/base/thread_name.hpp"
#include "resolver/dnssec/keys.hpp"
#include "sync/service_impl.hpp"

namespace glbd::sync {
namespace {
// The DNSKEY set this instance publishes for each zone it signs, as its report carries it.
ZoneKeys zone_keys_of(const conf::Config& c) {
    ZoneKeys out;
    for (const auto& z : c.zones) {
        if (z.dnssec) out.emplace(z.origin, dnssec::published_id(z.dnssec->keys));
    }
    return out;
}
}  // namespace

namespace {
// The groups records' names: kuadrant-active-groups.<zone> of every zone served.
std::vector<std::string> groups_names(const conf::Config& c) {
    std::vector<std::string> out;
    for (const auto& z : c.zones) out.push_back(conf::active_groups_name(z.origin));
    return out;
}
}  // namespace

Service::Impl::Impl(const conf::Config& c, std::function<void()> cb) : config(c), on_change(std::move(cb)) {
    std::vector<conf::Host>().swap(
        config.hosts);  // the daemon's (set_own_hosts): not kept twice; "= {}" keeps the room
    networked = config.peers.has_value();
    MutexLock lock(mu);
    if (networked)
        sync_key = std::make_shared<const tsig::Key>(tsig::Key::from(config.peers->key.name, config.peers->key.secret));
    member_addresses = literal_members();
    own.cluster = config.cluster.id;
    own.instance = config.cluster.instance;
    own.location = config.cluster.location;
    own.group = own_group();
    own.reach = own_reach();
    own.dnskeys = zone_keys_of(config);
    uint64_t now = now_ms();
    own.incarnation = now / 1000;  // raised above any earlier life by load_state_dir() and by peers
    own.version = now;
    own.heartbeat = now;
    leads = std::hash<std::string>{}(own.origin());
    // Serials start anywhere, so that a peer's memory of our last generation cannot match after a
    // restart. Set first: what is loaded next is stamped with generations of this counter.
    store.set_generation(static_cast<uint32_t>(std::random_device{}()) | 1u);
    load_state_dir(now);
    store.set_own(own, now);
    store.set_groups_names(groups_names(config));
}

Service::Impl::~Impl() {}

// ---- own state (control thread)
void Service::Impl::set_own_hosts(HostList hosts, RecordList records) {
    {
        MutexLock lock(mu);
        bool same =
            std::as_const(hosts) == std::as_const(own.hosts) && std::as_const(records) == std::as_const(own.records);
        if (same && own_hosts_set) return;
        own_hosts_set = true;
        own.hosts = std::move(hosts);
        own.records = std::move(records);
        bump_own();
    }
    wake_up();
}

Status Service::Impl::set_override(const std::string& target, const std::string& state) {
    {
        MutexLock lock(mu);
        if (auto set = sync::set_override(own.overrides, target, state, now_ms()); !set) return set;
        bump_own();
    }
    wake_up();
    return ok();
}

std::string Service::Impl::own_group() const {
    if (config.kubernetes && !config.kubernetes->group.empty()) return config.kubernetes->group;
    return records_group;
}

void Service::Impl::set_records_group(const std::string& group) {
    {
        MutexLock lock(mu);
        records_group = group;
        if (own.group == own_group()) return;
        own.group = own_group();
        bump_own();
    }
    wake_up();
}

Status Service::Impl::set_active_groups(const std::optional<std::vector<std::string>>& list) {
    std::optional<std::vector<std::string>> groups = std::vector<std::string>{};
    if (list) {
        std::string bad;
        groups = group_set(*list, &bad);
        if (!groups)
            return Err{"not a group name: \"" + bad + "\" (1 to 16 printable characters, none of ;&,=\"' or space)"};
        if (groups->size() > ReportLimits::kMaxGroups)
            return Err{"more than " + std::to_string(ReportLimits::kMaxGroups) + " active groups"};
    }
    {
        MutexLock lock(mu);
        // Later than any set known, so that it wins everywhere even against a peer's clock a little ahead.
        uint64_t at = now_ms();
        if (auto last = store.admin_groups()) at = std::max(at, last->at_ms + 1);
        own.active_groups = ActiveGroups{std::move(*groups), at, !list.has_value()};
        bump_own();
    }
    wake_up();
    return ok();
}

void Service::Impl::bump_own() {
    uint64_t now = now_ms();
    own.version = std::max(own.version + 1, now);
    own.heartbeat = now;
    store.set_own(own, now);
    notify_pending = true;
    request_save();
}

void Service::Impl::wake_up() {
    MutexLock lock(mu);
    if (wakeable) uv_async_send(&wake);
}

uint64_t Service::Impl::dead_after() const {
    return networked ? static_cast<uint64_t>(config.peers->dead_after.count()) : UINT64_MAX / 4;
}

// The members given as addresses (names are resolved each round).
std::set<Address> Service::Impl::literal_members() const {
    std::set<Address> out;
    if (!networked) return out;
    for (const auto& m : config.peers->members) {
        if (Address a; Address::parse(m.host, a)) out.insert(a);
    }
    return out;
}

// A reload: new members, key, zones or intervals; what is known stays.
void Service::Impl::reconfigure(const conf::Config& c) {
    stop();
    MutexLock lock(mu);
    config = c;
    std::vector<conf::Host>().swap(config.hosts);
    networked = config.peers.has_value();
    sync_key =
        networked ? std::make_shared<const tsig::Key>(tsig::Key::from(config.peers->key.name, config.peers->key.secret))
                  : nullptr;
    self_addresses.clear();                // members are resolved again by the first round; keep the old ones till then
    member_addresses = literal_members();  // names: when the first round has resolved them
    stopping = false;
    closing = false;
    own.location = config.cluster.location;
    own.group = own_group();
    own.reach = own_reach();
    own.dnskeys = zone_keys_of(config);
    store.set_groups_names(groups_names(config));
    if (!networked || !config.peers->learn_members) learnt = {};
    // The zones' static data may have changed: a new version makes every server's serial rise (serial()).
    bump_own();
}

std::shared_ptr<const tsig::Key> Service::Impl::current_key() const {
    MutexLock lock(mu);
    return sync_key;
}

// ---- the sync loop
void Service::Impl::start() {
    if (!networked) return;
    uv_loop_init(&loop);
    uv_async_init(&loop, &wake, [](uv_async_t* a) { static_cast<Impl*>(a->data)->on_wake(); });
    wake.data = this;
    uv_timer_init(&loop, &pull_timer);
    uv_timer_init(&loop, &live_timer);
    uv_timer_init(&loop, &save_timer);
    pull_timer.data = live_timer.data = save_timer.data = this;
    start_beats();
    auto interval = static_cast<uint64_t>(config.peers->sync_interval.count());
    round_lead.reset();
    round_rest.clear();
    uv_timer_start(
        &pull_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->round(); }, 0, interval);
    uv_timer_start(
        &live_timer, [](uv_timer_t* t) { static_cast<Impl*>(t->data)->check_liveness(); }, 100, 100);
    started_ms = now_ms();
    {
        MutexLock lock(mu);
        wakeable = true;
    }
    // What changed before the loop ran is written a second from now, as if a write had just been made: at
    // start the control thread is building the first snapshot, and a large view's write (a second of work
    // at 10,000 hosts x 20 clusters) would take CPU from it before the first answer. The file on disk is
    // what was just loaded.
    uv_update_time(&loop);
    last_save_ms = uv_now(&loop);
    schedule_save();
    thread = std::thread([this] {
        name_this_thread("glbd-sync");
        uv_run(&loop, UV_RUN_DEFAULT);
    });
}

void Service::Impl::stop() {
    {
        MutexLock lock(mu);
        if (!wakeable) return;  // not running
        stopping = true;
        wakeable = false;  // this is the last signal: the sync thread closes `wake` when it sees it
        uv_async_send(&wake);
    }
    thread.join();
    uv_loop_close(&loop);
}

void Service::Impl::on_wake() {
    bool stop_now, notify;
    std::set<Address> now_pull;
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
        close_beat_sockets();
        std::vector<Exchange*> live;
        for (const auto& [x, owned] : exchanges) live.push_back(x);
        for (Exchange* x : live) finish(x, "stopping");
        uv_walk(
            &loop,
            [](uv_handle_t* h, void*) {
                if (!uv_is_closing(h)) uv_close(h, nullptr);
            },
            nullptr);
        return;
    }
    if (notify && members.empty()) {  // not resolved yet: the first round sends it
        MutexLock lock(mu);
        notify_pending = true;
    } else if (notify) {
        announce();
    }
    for (const Address& from : now_pull) {  // pull from the member that sent it, or from all when none did
        bool matched = false;
        for (const auto& m : members) {
            if (m.address != from) continue;
            exchange(m, false);
            matched = true;
        }
        if (!matched) {
            for (const auto& m : members) exchange(m, false);
        }
    }
    schedule_save();
}

// Every syncInterval: resolve the members again, then pull from each (the lead first, see round_lead).
void Service::Impl::round() {
    if (!resolving) resolve_members();
    ++rounds;
    bool notify;
    {
        MutexLock lock(mu);
        notify = notify_pending;
        notify_pending = false;
    }
    if (!notify) send_beats();
    notify_still_unheard();
    pull_rest();  // the last round's lead is still out (a slow peer): the others wait no longer
    take_relayed_news();
    std::vector<SocketAddress> due = due_pulls();
    if (!due.empty()) {
        size_t lead = leads++ % due.size();
        round_lead = due[lead];
        for (size_t i = 0; i < due.size(); ++i) {
            if (i != lead) round_rest.push_back(due[i]);
        }
        exchange(*round_lead, false);
        if (!in_flight.count({*round_lead, false})) pull_rest();  // ended at once, or never began
    }
    if (notify) announce();
}

// The members this round pulls. A member whose beats come shows its news by them (and a pull follows at
// once), so a round pulls it only when its beats have not come for two rounds (lost, an older glbd, a path
// without UDP), when it has relayed news for us (want_relay), or when kPullAtLeastEvery rounds have passed
// since its last pull (for what no beat carries: the origins beyond a beat's room, a peer's new serial).
std::vector<SocketAddress> Service::Impl::due_pulls() {
    const auto interval = static_cast<uint64_t>(config.peers->sync_interval.count());
    const uint64_t now = now_ms();
    std::vector<SocketAddress> due;
    MutexLock lock(mu);
    for (const SocketAddress& m : members) {
        auto st = peer_status.find(m);
        if (st == peer_status.end() || want_relay.count(m) || st->second.last_beat_ms + 2 * interval < now ||
            st->second.last_ok_ms + kPullAtLeastEvery * interval < now) {
            due.push_back(m);
        }
    }
    return due;
}

// This instance's own change, to every member: by beats (a beat now and two more soon), and by a NOTIFY over
// TCP to the members whose beats we have not heard lately (an older glbd, or a path without UDP). A member
// that beats hears ours too: a second connection per change would only add to what a lost SYN can delay.
void Service::Impl::announce() {
    announce_by_beats();
    std::vector<SocketAddress> silent;
    {
        MutexLock lock(mu);
        uint64_t now = now_ms(), lately = suspect_after();
        for (const auto& m : members) {
            // A member never heard at all is starting too (its first round pulls us, our beat shows it the
            // change) or not up yet: at a fleet's cold start, NOTIFYs to all of them cost every server CPU
            // for nothing. It gets one at the next round if it is still unheard then (notify_unheard).
            if (never_heard(m)) {
                notify_unheard = true;
                continue;
            }
            if (peer_status.at(m).last_beat_ms + lately < now) silent.push_back(m);
        }
    }
    for (const auto& m : silent) exchange(m, true);
}

// The NOTIFY announce() held back from the members never heard, to those still unheard a round later.
void Service::Impl::notify_still_unheard() {
    if (!notify_unheard) return;
    notify_unheard = false;
    std::vector<SocketAddress> unheard;
    {
        MutexLock lock(mu);
        for (const auto& m : members) {
            if (never_heard(m)) unheard.push_back(m);
        }
    }
    for (const auto& m : unheard) exchange(m, true);
}

bool Service::Impl::never_heard(const SocketAddress& m) const {
    auto st = peer_status.find(m);
    return st == peer_status.end() || (!st->second.last_ok_ms && !st->second.last_beat_ms);
}

void Service::Impl::pull_rest() {
    round_lead.reset();
    std::vector<SocketAddress> rest;
    rest.swap(round_rest);
    for (const auto& m : rest) exchange(m, false);
    // What was wanted while the lead was out, and that it did not bring.
    std::vector<SocketAddress> waiting;
    for (const auto& [m, w] : wanted) {
        if (!in_flight.count({m, false})) waiting.push_back(m);
    }
    for (const auto& m : waiting) {
        if (take_wanted(m)) exchange(m, false);
    }
}

bool Service::Impl::is_own_listen(const SocketAddress& addr) const {
    return std::find(config.listen.dns.begin(), config.listen.dns.end(), addr) != config.listen.dns.end();
}

bool Service::pulling() const {
    return impl_->pulls_open.load() > 0 && steady_ms() < impl_->pull_heard_ms.load() + Impl::kPullQuietMs;
}

Service::Service(const conf::Config& config, std::function<void()> on_change)
    : impl_(std::make_unique<Impl>(config, std::move(on_change))) {}
Service::~Service() { stop(); }
void Service::start() { impl_->start(); }
void Service::set_beat_source(int fd) { impl_->set_beat_source(fd); }
void Service::take_beat(const uint8_t* msg, size_t len, const SocketAddress& from) {
    bool running;
    {
        MutexLock lock(impl_->mu);
        running = impl_->wakeable;
    }
    if (!running) impl_->on_beat(msg, len, from);
}
void Service::stop() { impl_->stop(); }
void Service::reconfigure(const conf::Config& config) {
    impl_->reconfigure(config);
    impl_->start();
}
void Service::set_own_hosts(HostList hosts, RecordList records) {
    impl_->set_own_hosts(std::move(hosts), std::move(records));
}
void Service::set_records_group(const std::string& group) { impl_->set_records_group(group); }
Status Service::set_active_groups(const std::vector<std::string>& groups) { return impl_->set_active_groups(groups); }
void Service::clear_active_groups() { impl_->set_active_groups(std::nullopt); }
std::optional<GroupsInForce> Service::groups_in_force() const {
    MutexLock lock(impl_->mu);
    return impl_->store.groups_in_force(now_ms(), impl_->dead_after());
}
Status Service::set_override(const std::string& target, const std::string& state) {
    return impl_->set_override(target, state);
}
std::vector<HostEntry> Service::saved_own_hosts() const { return impl_->saved_own_hosts; }
RecordList Service::saved_own_records() const { return impl_->saved_own_records; }
SharedView Service::shared_view(uint32_t* serial) const {
    MutexLock lock(impl_->mu);
    if (serial) {
        uint64_t newest = 0;
        for (const auto& [o, k] : impl_->store.known()) newest = std::max(newest, k.state.version);
        *serial = static_cast<uint32_t>(newest / 10);
    }
    return impl_->store.shared_view(now_ms(), impl_->dead_after());
}
GlobalView Service::view(uint32_t* serial) const {
    GlobalView out;
    for (const auto& c : shared_view(serial)) out.push_back(*c);
    return out;
}
std::vector<Known> Service::known() const {
    MutexLock lock(impl_->mu);
    std::vector<Known> out;
    for (const auto& [o, k] : impl_->store.known()) out.push_back(k);
    return out;
}
std::vector<Service::InstanceStatus> Service::instances() const {
    MutexLock lock(impl_->mu);
    uint64_t now = now_ms();
    std::vector<InstanceStatus> out;
    for (const auto& [o, k] : impl_->store.known()) {
        out.push_back(
            InstanceStatus{k, impl_->store.alive(k, now, impl_->dead_after()), o == impl_->store.own_origin()});
    }
    return out;
}
std::vector<Service::KeyMismatch> Service::key_mismatches() const {
    MutexLock lock(impl_->mu);
    std::vector<std::string> served;
    for (const auto& z : impl_->config.zones) served.push_back(z.origin);
    uint64_t now = now_ms();
    std::vector<KeyMismatch> out;
    const ZoneKeys& own = impl_->own.dnskeys;
    auto id = [](const ZoneKeys& keys, const std::string& zone) {
        auto it = keys.find(zone);
        return it == keys.end() ? std::string() : it->second;
    };
    for (const auto& [o, k] : impl_->store.known()) {
        if (o == impl_->store.own_origin()) continue;
        for (auto& zone : sync::key_mismatches(served, own, k.state.dnskeys)) {
            out.push_back(
                {o, zone, id(own, zone), id(k.state.dnskeys, zone), impl_->store.alive(k, now, impl_->dead_after())});
        }
    }
    return out;
}
ZoneKeys Service::own_zone_keys() const {
    MutexLock lock(impl_->mu);
    return impl_->own.dnskeys;
}
OverrideMap Service::overrides() const {
    MutexLock lock(impl_->mu);
    return impl_->store.overrides();
}
std::vector<PeerStatus> Service::peers() const {
    MutexLock lock(impl_->mu);
    std::vector<PeerStatus> out;
    for (auto [a, s] : impl_->peer_status) {  // with its origin's beats (counted per origin, not per address)
        if (auto link = impl_->beat_links.find(s.origin); link != impl_->beat_links.end()) {
            s.beats_received = link->second.received;
            s.beats_lost = link->second.lost;
            s.loss_ratio = link->second.loss;
        }
        s.learnt = impl_->learnt.entries().count(a) > 0;
        out.push_back(std::move(s));
    }
    return out;
}
const SyncCounters& Service::counters() const { return impl_->counters; }
uint64_t Service::own_version() const {
    MutexLock lock(impl_->mu);
    return impl_->own.version;
}
std::vector<std::string> Service::not_holding(uint64_t version) const {
    MutexLock lock(impl_->mu);
    std::vector<std::string> out;
    uint64_t now = now_ms();
    const std::string& own = impl_->store.own_origin();
    for (const auto& [origin, k] : impl_->store.known()) {
        if (origin == own || !impl_->store.alive(k, now, impl_->dead_after())) continue;
        auto it = impl_->own_held.find(origin);
        if (it == impl_->own_held.end() || it->second.incarnation != impl_->own.incarnation ||
            it->second.version < version) {
            out.push_back(printable(origin));
        }
    }
    return out;
}
std::string Service::own_origin() const {
    MutexLock lock(impl_->mu);
    return impl_->own.origin();
}
Service::Handled Service::handle(const uint8_t* msg, size_t len, const geo::Address& from,
                                 std::vector<std::vector<uint8_t>>& out, MoreMessages& more) {
    return impl_->handle(msg, len, from, out, more);
}
Service::Handled Service::handle(const uint8_t* msg, size_t len, const geo::Address& from,
                                 std::vector<std::vector<uint8_t>>& out) {
    MoreMessages more;
    Handled h = impl_->handle(msg, len, from, out, more);
    for (bool again = static_cast<bool>(more); again;) {
        std::vector<uint8_t> next;
        again = more(next);
        if (!next.empty()) out.push_back(std::move(next));
    }
    return h;
}
Service::Auth Service::verify_request(const uint8_t* msg, size_t len, uint64_t now_s) const {
    auto key = impl_->current_key();
    return key ? Impl::verify(*key, msg, len, now_s, nullptr) : Auth::unsigned_;
}

}  // namespace glbd::sync
