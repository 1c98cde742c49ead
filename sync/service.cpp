#include "sync/service.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <ctime>
#include <random>
#include <utility>

#include "resolver/base/thread_name.hpp"
#include "resolver/dnssec/keys.hpp"
#include "resolver/model/names.hpp"
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
    for (const auto& z : c.zones) out.push_back(model::active_groups_name(z.origin));
    return out;
}
}  // namespace

Service::Impl::Impl(const conf::Config& c, std::function<void()> cb, Seams seams,
                    std::optional<StateFileRead> state_read) {
    config = c;
    on_change = std::move(cb);
    if (seams.clock) clock = seams.clock;
    if (!seams.datagrams) udp = std::make_unique<UdpDatagrams>();
    datagrams = seams.datagrams ? seams.datagrams : udp.get();
    std::vector<model::Host>().swap(
        config.hosts);  // the daemon's (set_own_hosts): not kept twice; "= {}" keeps the room
    networked = config.peers.has_value();
    uint64_t now = this->now();
    {
        MutexLock lock(mu);
        if (networked)
            sync_key =
                std::make_shared<const tsig::Key>(tsig::Key::from(config.peers->key.name, config.peers->key.secret));
        member_addresses = membership.literal_members();
        own.cluster = config.cluster.id;
        own.instance = config.cluster.instance;
        own.location = config.cluster.location;
        own.probes_outside = config.health.outside.enabled;
        own.group = own_group();
        own.reach = membership.own_reach();
        own.dnskeys = zone_keys_of(config);
        own.incarnation = now / 1000;  // raised above any earlier life by stateDir and by peers
        own.version = now;
        own.base_version = 0;  // (as version: a new life's every change is whole until one is not)
        own.heartbeat = now;
        pulls.set_first_lead(std::hash<std::string>{}(own.origin()));
        // Serials start anywhere, so that a peer's memory of our last generation cannot match after a
        // restart. Set first: what is loaded next is stamped with generations of this counter.
        store.set_generation(static_cast<uint32_t>(std::random_device{}()) | 1u);
    }
    state_dir.load(now, std::move(state_read));
    MutexLock lock(mu);
    store.set_own(own, now);
    store.set_groups_names(groups_names(config));
}

// ---- own state (control thread)
void Service::Impl::set_own_hosts(HostList hosts, RecordList records, std::vector<SharedCheck> checks) {
    {
        MutexLock lock(mu);
        bool same = std::as_const(hosts) == std::as_const(own.hosts) &&
                    std::as_const(records) == std::as_const(own.records) && checks == own.checks;
        if (same && own_hosts_set) return;
        own_hosts_set = true;
        own.hosts = std::move(hosts);
        own.records = std::move(records);
        own.checks = std::move(checks);
        bump_own();
    }
    wake_up();
}

void Service::Impl::set_own_outside(OutsideMap outside) {
    {
        MutexLock lock(mu);
        if (outside == own.outside) return;
        own.outside = std::move(outside);
        bump_own(/*outside_only=*/true);
    }
    wake_up();
}

Status Service::Impl::set_override(const std::string& target, const std::string& state) {
    {
        MutexLock lock(mu);
        if (auto set = sync::set_override(own.overrides, target, state, now()); !set) return set;
        bump_own();
    }
    wake_up();
    return ok();
}

Status Service::Impl::forget_instance(const std::string& origin) {
    {
        MutexLock lock(mu);
        if (origin == own.origin()) return Err{"\"" + origin + "\" is this instance"};
        auto it = store.known().find(origin);
        if (it == store.known().end())
            return Err{"no instance \"" + origin + "\" is known (name it CLUSTER/INSTANCE, as glbd status does)"};
        const uint64_t now_ms = now();
        const Known& k = it->second;
        if (store.alive(k, now_ms, dead_after())) {
            return Err{
                fmt::format("\"{}\" is alive (heard {:.1f} s ago): stop it first (a live instance comes "
                            "back with its next heartbeat)",
                            origin, static_cast<double>(now_ms - std::min(now_ms, k.last_heard_ms)) / 1000.0)};
        }
        own.forgotten[origin] = Forgotten{k.state.incarnation, k.state.heartbeat, now_ms};
        bump_own();
    }
    spdlog::warn("sync: {} forgotten through the admin API: every peer forgets it with this report", origin);
    wake_up();
    return ok();
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
        uint64_t at = now();
        if (auto last = store.admin_groups()) at = std::max(at, last->at_ms + 1);
        own.active_groups = ActiveGroups{std::move(*groups), at, !list.has_value()};
        bump_own();
    }
    wake_up();
    return ok();
}

// A reload: new members, key, zones or intervals; what is known stays.
void Service::Impl::reconfigure(const conf::Config& c) {
    stop();
    MutexLock lock(mu);
    config = c;
    std::vector<model::Host>().swap(config.hosts);
    networked = config.peers.has_value();
    sync_key =
        networked ? std::make_shared<const tsig::Key>(tsig::Key::from(config.peers->key.name, config.peers->key.secret))
                  : nullptr;
    self_addresses.clear();  // members are resolved again by the first round; keep the old ones till then
    member_addresses = membership.literal_members();  // names: when the first round has resolved them
    stopping = false;
    closing = false;
    own.location = config.cluster.location;
    own.probes_outside = config.health.outside.enabled;
    own.group = own_group();
    own.reach = membership.own_reach();
    own.dnskeys = zone_keys_of(config);
    store.set_groups_names(groups_names(config));
    if (!networked || !config.peers->learn_members) learnt = {};
    // The zones' static data may have changed: a new version makes every server's serial rise (serial()).
    bump_own();
}

// ---- the sync loop
void Service::Impl::start() {
    if (!networked) return;
    uv_loop_init(&loop);
    uv_async_init(&loop, &wake, [](uv_async_t* a) { static_cast<Impl*>(a->data)->on_wake(); });
    wake.data = this;
    running = true;
    beats.start();
    pulls.start();
    liveness.start();
    started_ms = now();
    {
        MutexLock lock(mu);
        wakeable = true;
    }
    state_dir.start();
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
    running = false;
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
        state_dir.save_now();
        beats.close();
        pulls.stop();
        uv_walk(
            &loop,
            [](uv_handle_t* h, void*) {
                if (!uv_is_closing(h)) uv_close(h, nullptr);
            },
            nullptr);
        return;
    }
    const std::vector<SocketAddress> members = membership.members();  // (a copy: the exchanges may drop one)
    if (notify && members.empty()) {                                  // not resolved yet: the first round sends it
        MutexLock lock(mu);
        notify_pending = true;
    } else if (notify) {
        pulls.announce();
    }
    for (const Address& from : now_pull) {  // pull from the member that sent it, or from all when none did
        bool matched = false;
        for (const auto& m : members) {
            if (m.address != from) continue;
            pulls.exchange(m, false);
            matched = true;
        }
        if (!matched) {
            for (const auto& m : members) pulls.exchange(m, false);
        }
    }
    state_dir.schedule_save();
}

bool Service::pulling() const { return impl_->pulls.pulling(); }

Service::Service(const conf::Config& config, std::function<void()> on_change, Seams seams,
                 std::optional<StateFileRead> state_read)
    : impl_(std::make_unique<Impl>(config, std::move(on_change), seams, std::move(state_read))) {}
Service::~Service() { stop(); }
void Service::start() { impl_->start(); }
void Service::set_beat_source(int fd) { impl_->beats.set_source(fd); }
void Service::take_beat(const uint8_t* msg, size_t len, const SocketAddress& from) {
    bool running;
    {
        MutexLock lock(impl_->mu);
        running = impl_->wakeable;
    }
    if (!running) impl_->beats.on_beat(msg, len, from);
}
void Service::stop() { impl_->stop(); }
void Service::reconfigure(const conf::Config& config) {
    impl_->reconfigure(config);
    impl_->start();
}
void Service::set_own_outside(OutsideMap outside) { impl_->set_own_outside(std::move(outside)); }
void Service::set_own_hosts(HostList hosts, RecordList records, std::vector<SharedCheck> checks) {
    impl_->set_own_hosts(std::move(hosts), std::move(records), std::move(checks));
}
void Service::set_records_group(const std::string& group) { impl_->set_records_group(group); }
Status Service::set_active_groups(const std::vector<std::string>& groups) { return impl_->set_active_groups(groups); }
void Service::clear_active_groups() { impl_->set_active_groups(std::nullopt); }
std::optional<GroupsInForce> Service::groups_in_force() const {
    MutexLock lock(impl_->mu);
    return impl_->store.groups_in_force(impl_->now(), impl_->dead_after());
}
Status Service::forget_instance(const std::string& origin) { return impl_->forget_instance(origin); }
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
    return impl_->store.shared_view(impl_->now(), impl_->dead_after());
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
    uint64_t now = impl_->now();
    std::vector<InstanceStatus> out;
    for (const auto& [o, k] : impl_->store.known()) {
        const bool alive = impl_->store.alive(k, now, impl_->dead_after());
        const uint64_t died = k.last_heard_ms + impl_->dead_after() + k.grace_ms;
        out.push_back(InstanceStatus{k, alive, o == impl_->store.own_origin(), !alive && now > died ? now - died : 0});
    }
    return out;
}
std::vector<Service::KeyMismatch> Service::key_mismatches() const {
    MutexLock lock(impl_->mu);
    std::vector<std::string> served;
    for (const auto& z : impl_->config.zones) served.push_back(z.origin);
    uint64_t now = impl_->now();
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
IdentityConflict Service::identity_conflict() const {
    MutexLock lock(impl_->mu);
    return impl_->identity_conflict;
}
const SyncCounters& Service::counters() const { return impl_->counters; }
uint64_t Service::own_version() const {
    MutexLock lock(impl_->mu);
    return impl_->own.version;
}
std::vector<std::string> Service::not_holding(uint64_t version) const {
    MutexLock lock(impl_->mu);
    std::vector<std::string> out;
    uint64_t now = impl_->now();
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
    return impl_->serving.handle(msg, len, from, out, more);
}
Service::Handled Service::handle(const uint8_t* msg, size_t len, const geo::Address& from,
                                 std::vector<std::vector<uint8_t>>& out) {
    MoreMessages more;
    Handled h = impl_->serving.handle(msg, len, from, out, more);
    for (bool again = static_cast<bool>(more); again;) {
        std::vector<uint8_t> next;
        again = more(next);
        if (!next.empty()) out.push_back(std::move(next));
    }
    return h;
}
Service::Auth Service::verify_request(const uint8_t* msg, size_t len, uint64_t now_s) const {
    auto key = impl_->current_key();
    return key ? Serving::verify(*key, msg, len, now_s, nullptr) : Auth::unsigned_;
}

}  // namespace glbd::sync
