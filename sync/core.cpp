// sync/core — what the parts of the sync service share: this instance's own state, stateDir's pending write,
// what peers say of us and which of their hosts we take.
#include "sync/core.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "resolver/model/names.hpp"
#include "sync/state_file.hpp"

namespace glbd::sync {

std::string Core::own_group() const {
    if (config.kubernetes && !config.kubernetes->group.empty()) return config.kubernetes->group;
    return records_group;
}

void Core::bump_own(bool outside_only) {
    uint64_t now = this->now();
    own.base_version = own.base();
    own.version = std::max(own.version + 1, now);
    if (!outside_only) own.base_version = own.version;
    own.heartbeat = now;
    store.set_own(own, now);
    notify_pending = true;
    request_save();
}

Core::BeatLink::Seen Core::BeatLink::count(uint64_t seq, uint64_t mono_ms, uint64_t life) {
    if (life && life < incarnation) return Seen::replay;
    if (life > incarnation) {
        if (incarnation) last_seq = 0;  // a new life: its first beat counts no loss, whatever its number
        incarnation = life;
    }
    if (seq <= last_seq) return seq + kRemembered <= last_seq ? Seen::replay : Seen::again;
    if (last_seq) {  // (a first beat counts no loss)
        uint64_t missed = std::min<uint64_t>(seq - last_seq - 1, kRemembered);
        lost += missed;
        for (uint64_t k = 0; k < missed; ++k) loss += (1.0 - loss) / kLossWindow;
    }
    loss -= loss / kLossWindow;
    received++;
    last_seq = seq;
    last_mono_ms = mono_ms;
    return Seen::fresh;
}

void Core::wake_up() {
    MutexLock lock(mu);
    if (wakeable) uv_async_send(&wake);
}

uint64_t Core::dead_after() const {
    return networked ? static_cast<uint64_t>(config.peers->dead_after.count()) : UINT64_MAX / 4;
}

std::shared_ptr<const tsig::Key> Core::current_key() const {
    MutexLock lock(mu);
    return sync_key;
}

uint64_t Core::suspect_after() const {
    return std::max(3 * static_cast<uint64_t>(config.peers->sync_interval.count()), dead_after() / 2);
}

bool Core::never_heard(const SocketAddress& m) const {
    auto st = peer_status.find(m);
    return st == peer_status.end() || (!st->second.last_ok_ms && !st->second.last_beat_ms);
}

void Core::request_save() {
    if (config.state_dir.empty()) return;
    if (networked) {
        save_pending = true;  // the sync thread writes it (StateDir::schedule_save)
        return;
    }
    save_pending = false;  // no sync thread: write now
    write_states(known_states());
}

std::vector<InstanceState> Core::known_states() const {
    std::vector<InstanceState> out;
    out.reserve(store.known().size());
    for (const auto& [o, k] : store.known()) out.push_back(k.state);
    return out;
}

void Core::write_states(const std::vector<InstanceState>& states) const {
    if (auto saved = save_state_file(config.state_dir, states, now()); !saved) spdlog::warn("sync: {}", saved.error());
}

void Core::note_own_held(const std::string& peer, const InstanceState& ours) {
    if (peer.empty() || peer == own.origin() || ours.incarnation != own.incarnation) return;
    Held& h = own_held[peer];
    if (h.incarnation != ours.incarnation || h.version < ours.version) h = Held{ours.version, ours.incarnation};
    const auto& known = store.known();
    if (own_held.size() > known.size() + 16) {  // peers forgotten since
        std::erase_if(own_held, [&known](const auto& e) { return !known.contains(e.first); });
    }
}

void Core::refute(const InstanceState& heard, const std::string& via) {
    if (heard.incarnation < own.incarnation || (heard.incarnation == own.incarnation && heard.version <= own.version))
        return;
    // Once at a start without stateDir is expected; again and again, another glbd runs as this one.
    const uint64_t now_ms = now();
    refutes.push_back(now_ms);
    while (!refutes.empty() && refutes.front() + kConflictWindowMs < now_ms) refutes.pop_front();
    if (refutes.size() >= kConflictRefutes) conflict("through " + via);
    spdlog::info("sync: peers hold this instance at incarnation {} version {}; taking incarnation {}",
                 heard.incarnation, heard.version, heard.incarnation + 1);
    own.incarnation = heard.incarnation + 1;
    own.version = own.base_version = 0;
    bump_own();
}

void Core::conflict(const std::string& where) {
    const uint64_t now_ms = now();
    identity_conflict = IdentityConflict{where, now_ms};
    uint64_t left_out = 0;
    if (report_log.allow("identity " + where, now_ms, &left_out)) {
        spdlog::error(
            "sync: another glbd runs as {} ({}; this one listens on {}): the two take turns and each one's "
            "endpoints vanish from the view; give each its own cluster.instance (the default is the host name){}",
            own.origin(), printable(where), config.listen.dns.empty() ? std::string("-") : config.listen.dns[0].str(),
            left_out ? " (and " + std::to_string(left_out) + " more not logged)" : std::string());
    }
}

bool Core::in_our_zones(std::string_view host) const {
    std::string_view h = host.starts_with("*.") ? host.substr(2) : host;
    return std::any_of(config.zones.begin(), config.zones.end(),
                       [&](const model::Zone& z) { return model::is_subdomain(h, z.origin); });
}

bool Core::servable(const HostEntry& h) const {
    if (!in_our_zones(h.host)) return false;
    bool apex =
        std::any_of(config.zones.begin(), config.zones.end(), [&](const model::Zone& z) { return z.origin == h.host; });
    return !apex || std::all_of(h.endpoints.begin(), h.endpoints.end(),
                                [](const EndpointState& ep) { return ep.target.is_address(); });
}

}  // namespace glbd::sync
