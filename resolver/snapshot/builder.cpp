#include "resolver/snapshot/builder.hpp"

#include <sched.h>

#include <algorithm>
#include <ctime>
#include <exception>
#include <set>
#include <thread>

#include "resolver/base/thread_name.hpp"
#include "resolver/snapshot/host.hpp"
#include "resolver/snapshot/signed.hpp"
#include "resolver/wire/text.hpp"

namespace glbd {
namespace {

// A zone's index for what is served: its origins, this cluster's id and the nearest fallback, what every host's
// plan depends on besides its entries; and a signed zone's keys and validity, what its signatures depend on.
std::string config_key(const model::Served& served) {
    std::string key = std::string(served.cluster_id) + (served.nearest ? "/n" : "/-");
    for (const auto& z : served.zones) {
        key += "|" + z.origin;
        if (z.dnssec) key += "/" + dnssec::signing_id(z.dnssec->keys, z.dnssec->validity_seconds());
    }
    return key;
}

// The CPUs this process may run on (its affinity: a glbd pinned to one CPU builds on one thread).
size_t usable_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<size_t>(CPU_COUNT(&set));
    return std::thread::hardware_concurrency();
}

}  // namespace

void SnapshotBuilder::Places::build(const std::vector<HostEntry>& hosts) {
    hosts_ = &hosts;
    size_t size = 16;
    while (size < hosts.size() * 3 / 2) size *= 2;  // at most two-thirds full: 8 bytes a slot, one cluster's
    slots_.assign(size, Slot{});
    next_.clear();
    mask_ = size - 1;
    for (size_t p = 0; p < hosts.size(); ++p) {
        NameKey name(hosts[p].host);
        size_t i = name.hash & mask_;
        auto check = static_cast<uint32_t>(name.hash >> 32);
        for (; slots_[i].place != kNone; i = (i + 1) & mask_) {
            if (slots_[i].check == check && hosts[slots_[i].place].host == name.name) break;  // given twice
        }
        if (slots_[i].place == kNone) {
            slots_[i] = Slot{check, static_cast<uint32_t>(p)};
            continue;
        }
        // Another entry of a name: chained after the name's last place.
        if (next_.empty()) next_.assign(hosts.size(), kNone);
        uint32_t last = slots_[i].place;
        while (next_[last] != kNone) last = next_[last];
        next_[last] = static_cast<uint32_t>(p);
    }
}

uint32_t SnapshotBuilder::Places::find(const std::vector<HostEntry>& hosts, const NameKey& name) const {
    if (slots_.empty()) return kNone;
    for (size_t i = name.hash & mask_;; i = (i + 1) & mask_) {
        const Slot& s = slots_[i];
        if (s.place == kNone) return kNone;
        if (s.check == static_cast<uint32_t>(name.hash >> 32) && hosts[s.place].host == name.name) return s.place;
    }
}

void SnapshotBuilder::reset() { full_reset("", false); }

void SnapshotBuilder::full_reset(const std::string& key, bool counted) {
    clusters_.clear();
    hosts_.clear();
    host_at_.clear();
    config_key_ = key;
    labels_ = std::make_shared<Labels>();  // what no host holds any more goes with the hosts
    counted_ = counted;
}

std::shared_ptr<Snapshot> SnapshotBuilder::build(const model::Served& served, const SharedView& view,
                                                 std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                                 const CounterIds& counter_ids,
                                                 const std::vector<ZoneRecord>& published) {
    auto s = std::make_shared<Snapshot>();
    s->serial = serial;
    s->geo = std::move(geo);
    s->udp_payload = served.udp_payload;
    s->signed_at = static_cast<uint32_t>(std::time(nullptr));
    for (const auto& cz : served.zones) s->zones.push_back(build_zone(cz, serial));
    begin(served, static_cast<bool>(counter_ids), s->signed_at);
    try {
        Clusters next;
        Changes changes = touched_by(view, next);  // (a full build's names are all of them: none are listed there)
        std::vector<NameKey> names = last_.full ? every_name(clusters_of(next)) : names_of(std::move(changes), next);
        build_hosts(served, *s, next, names, counter_ids);
        before_.clear(), before_at_.clear();
        clusters_ = std::move(next);  // the old views (and the names in `names`) may go now
        zone_data(view, published, *s);
    } catch (...) {
        before_.clear(), before_at_.clear();
        full_reset("", false);  // part done: the next build starts over
        throw;
    }
    finish(*s);
    return s;
}

// A full build when the config's key or the counting changed (or nothing was built yet), else incremental.
void SnapshotBuilder::begin(const model::Served& served, bool counted, uint32_t now) {
    std::string key = config_key(served);
    last_ = Stats{};
    // Signatures due to be made again: every host is built again (and signed).
    last_.full =
        key != config_key_ || counted != counted_ || clusters_.empty() || (resign_at_ != 0 && now >= resign_at_);
    if (last_.full) {  // the hosts as they were: their signatures may serve again (sign_host)
        before_ = std::move(hosts_), before_at_ = std::move(host_at_);
        full_reset(key, counted);
    }
    defer_now_ = defer_first_ && last_.full && before_.empty();
}

const HostBlock* SnapshotBuilder::built_before(const std::string& name) const {
    if (auto at = host_at_.find(name); at != host_at_.end()) return hosts_[at->second].get();
    if (auto at = before_at_.find(name); at != before_at_.end()) return before_[at->second].get();
    return nullptr;
}

// Which host names a change touches: the clusters touched whole (one that came, went, or changed its liveness,
// location or standing by), else the names whose entry differs. `next` receives every cluster of `view` with its
// places.
SnapshotBuilder::Changes SnapshotBuilder::touched_by(const SharedView& view, Clusters& next) {
    Changes changes;
    Touched& touched = changes.names;
    for (const auto& cv : view) {
        auto old = clusters_.find(cv->id);
        if (old != clusters_.end() && old->second.view == cv) {  // the same object: nothing under it changed
            next.emplace(cv->id, std::move(old->second));
            clusters_.erase(old);
            continue;
        }
        Cluster c{cv, {}};
        bool whole = false;
        if (last_.full) {  // (clusters_ is empty: every name is built, every_name lists them)
            c.places.build(cv->hosts);
        } else if (old == clusters_.end() || old->second.view->alive != cv->alive ||
                   old->second.view->location != cv->location || old->second.view->standby != cv->standby) {
            c.places.build(cv->hosts);
            whole = true;
            if (old != clusters_.end()) changes.whole.push_back(&old->second);
        } else {
            compare(old->second, c, touched);
        }
        auto placed = next.emplace(cv->id, std::move(c)).first;
        if (whole) changes.whole.push_back(&placed->second);
    }
    for (const auto& [id, gone] : clusters_) {  // clusters no longer in the view (the rest changed: done)
        if (!next.count(id)) changes.whole.push_back(&gone);
    }
    return changes;
}

// One cluster's hosts before (`was`) and now (`now`, whose places are set here): the names whose entry
// differs, came or went.
void SnapshotBuilder::compare(Cluster& was_cluster, Cluster& now_cluster, Touched& touched) {
    const std::vector<HostEntry>& was = was_cluster.view->hosts;
    const std::vector<HostEntry>& now = now_cluster.view->hosts;
    bool one_list = was_cluster.view->hosts.same_list(now_cluster.view->hosts);  // nothing under it changed
    bool same_places = was.size() == now.size();
    for (size_t i = 0; !one_list && same_places && i < now.size(); ++i) same_places = was[i].host == now[i].host;
    if (one_list || same_places) {  // the same names in the same places: compare place by place
        now_cluster.places = std::move(was_cluster.places);
        now_cluster.places.rebase(now);
        for (size_t i = 0; !one_list && i < now.size(); ++i) {
            if (!(was[i] == now[i])) touched.insert(NameKey(now[i].host));
        }
        return;
    }
    now_cluster.places.build(now);
    const Places& before = was_cluster.places;
    now_cluster.places.each([&](const NameKey& name, uint32_t p) {
        uint32_t q = before.find(was, name);
        // Every entry of the name, in order: the same ones, or the name is touched.
        for (; p != Places::kNone && q != Places::kNone; p = now_cluster.places.next(p), q = before.next(q)) {
            if (!(was[q] == now[p])) break;
        }
        if (p != Places::kNone || q != Places::kNone) touched.insert(name);
    });
    before.each([&](const NameKey& name, uint32_t) {
        if (now_cluster.places.find(now, name) == Places::kNone) touched.insert(name);
    });
}

// The names a change touches: every name of the clusters touched whole (every_name: their lists walked beside
// each other, not each name hashed into a set, as each cluster that comes at a fleet's start would be), then
// the names compared as changed that none of those has; without such clusters, in list order.
std::vector<SnapshotBuilder::NameKey> SnapshotBuilder::names_of(Changes changes, const Clusters& next) {
    if (changes.whole.empty()) return in_list_order(std::move(changes.names), next);
    std::vector<NameKey> names = every_name(changes.whole);
    for (const NameKey& name : changes.names) {
        if (std::none_of(changes.whole.begin(), changes.whole.end(),
                         [&](const Cluster* c) { return c->places.find(c->view->hosts, name) != Places::kNone; }))
            names.push_back(name);
    }
    return names;
}

std::vector<const SnapshotBuilder::Cluster*> SnapshotBuilder::clusters_of(const Clusters& clusters) {
    std::vector<const Cluster*> out;
    out.reserve(clusters.size());
    for (const auto& [id, c] : clusters) out.push_back(&c);
    return out;
}

// Many hosts are built in the order of the largest cluster's list, the rest after: each cluster's entries are
// then read front to back wherever the clusters list their hosts in the same order (as a state file, a
// transfer or the same DNSPolicy gives them), not one cache miss after another.
std::vector<SnapshotBuilder::NameKey> SnapshotBuilder::in_list_order(Touched touched, const Clusters& next) {
    std::vector<NameKey> names;
    names.reserve(touched.size());
    if (touched.size() >= kInOrderFrom && !next.empty()) {
        const ClusterView* largest = nullptr;
        for (const auto& [id, c] : next) {
            if (!largest || c.view->hosts.size() > largest->hosts.size()) largest = c.view.get();
        }
        for (const HostEntry& he : largest->hosts) {
            if (NameKey k(he.host); touched.erase(k)) names.push_back(k);
        }
    }
    names.insert(names.end(), touched.begin(), touched.end());
    return names;
}

// Every name of every cluster, for a full build: the largest cluster's in its list order, then those it does not
// have, cluster by cluster. Each cluster is walked beside the largest one's list, so where the clusters list the
// same names in the same order (as a state file, a transfer or the same DNSPolicy gives them) a name costs one
// compare of two texts, most often one shared block (no hashing, no set of every name as a change's lists).
std::vector<SnapshotBuilder::NameKey> SnapshotBuilder::every_name(const std::vector<const Cluster*>& clusters) {
    std::vector<NameKey> names;
    const Cluster* largest = nullptr;
    for (const Cluster* c : clusters) {
        if (!largest || c->view->hosts.size() > largest->view->hosts.size()) largest = c;
    }
    if (!largest) return names;
    const std::vector<HostEntry>& big = largest->view->hosts;
    names.reserve(big.size());
    largest->places.each_first(big, [&](uint32_t p) { names.emplace_back(big[p].host); });
    Touched others;  // the names the largest cluster does not have, each listed once
    for (const Cluster* c : clusters) {
        if (c == largest) continue;
        const std::vector<HostEntry>& hosts = c->view->hosts;
        size_t beside = 0;  // the largest list's place where this one's next name is expected
        c->places.each_first(hosts, [&](uint32_t p) {
            const SharedText& name = hosts[p].host;
            if (beside < big.size() && big[beside].host == name) {
                while (beside < big.size() && big[beside].host == name) ++beside;
                return;
            }
            NameKey key(name);
            if (uint32_t at = largest->places.find(big, key); at != Places::kNone) {
                beside = at + 1;
            } else if (others.insert(key).second) {
                names.push_back(key);
            }
        });
    }
    return names;
}

// Each of `names` built again from its entries in every cluster of `next` (or gone from `hosts_` when no
// cluster names it any more). Many (a full build) are shared out among threads: each builds its share into
// its places in `built`, and the blocks are applied in order, so the result is the same as with one thread.
void SnapshotBuilder::build_hosts(const model::Served& served, const Snapshot& s, const Clusters& next,
                                  const std::vector<NameKey>& names, const CounterIds& counter_ids) {
    SharedIds ids(counter_ids);
    auto build_range = [&](size_t from, size_t to, auto&& done) {
        HostWriter writer(*labels_);
        writer.defer_signing(defer_now_);
        Contributions contributions;
        std::vector<uint32_t> cursors(next.size(), 0);
        for (size_t i = from; i < to; ++i) {
            contributions_of(next, names[i], contributions, cursors);
            std::string name(names[i].name);
            std::shared_ptr<const HostBlock> b;
            if (!contributions.empty())
                b = writer.build(served, s, name, contributions, ids, labels_, built_before(name));
            done(i, std::move(name), std::move(b));
        }
        return writer.signed_sets();
    };
    auto add = [this](const SignCount& c) {
        last_.signed_sets.made += c.made, last_.signed_sets.kept += c.kept, last_.signed_sets.deferred += c.deferred;
    };
    size_t threads = names.size() < kParallelFrom ? 1 : std::clamp<size_t>(usable_cpus(), 1, threads_);
    if (threads == 1) {
        add(build_range(0, names.size(), [&](size_t, std::string&& name, std::shared_ptr<const HostBlock>&& b) {
            apply(std::move(name), std::move(b));
        }));
        return;
    }
    std::vector<std::shared_ptr<const HostBlock>> built(names.size());
    auto keep = [&](size_t i, std::string&&, std::shared_ptr<const HostBlock>&& b) { built[i] = std::move(b); };
    std::vector<std::thread> helpers;
    std::vector<std::exception_ptr> failed(threads);
    std::vector<SignCount> counts(threads);
    for (size_t t = 1; t < threads; ++t) {
        helpers.emplace_back([&, t] {
            name_this_thread("glbd-build");
            try {
                counts[t] = build_range(names.size() * t / threads, names.size() * (t + 1) / threads, keep);
            } catch (...) {
                failed[t] = std::current_exception();
            }
        });
    }
    try {
        counts[0] = build_range(0, names.size() / threads, keep);
    } catch (...) {
        failed[0] = std::current_exception();
    }
    for (auto& h : helpers) h.join();
    for (const auto& f : failed) {
        if (f) std::rethrow_exception(f);
    }
    for (const auto& c : counts) add(c);
    for (size_t n = 0; n < names.size(); ++n) apply(std::string(names[n].name), std::move(built[n]));
}

// Each host's entry in every cluster that names it, in cluster order. In list order (see in_list_order) a
// cluster's next place (`cursors`, one per cluster, a building thread's own) is where the name is, unless the
// clusters list their hosts differently: looked at first, it spares the table's lookup; and the next hosts'
// entries are read next, so they are asked for now.
void SnapshotBuilder::contributions_of(const Clusters& clusters, const NameKey& host, Contributions& out,
                                       std::vector<uint32_t>& cursors) {
    out.clear();
    size_t k = 0;
    for (const auto& [id, c] : clusters) {
        const std::vector<HostEntry>& hosts = c.view->hosts;
        uint32_t& cursor = cursors[k++];
        uint32_t p = c.places.unique() && cursor < hosts.size() && hosts[cursor].host == host.name
                         ? cursor
                         : c.places.find(hosts, host);
        for (; p != Places::kNone; p = c.places.next(p)) {
            out.emplace_back(c.view.get(), &hosts[p]);
            cursor = p + 1;
            if (p + 4 < hosts.size()) {  // every line of the entry (72 bytes: one or two lines)
                const char* ahead = reinterpret_cast<const char*>(&hosts[p + 4]);
                for (size_t at = 0; at < sizeof(HostEntry); at += 64) __builtin_prefetch(ahead + at);
                __builtin_prefetch(ahead + sizeof(HostEntry) - 1);
            }
            if (p + 2 < hosts.size()) {
                __builtin_prefetch(hosts[p + 2].endpoints.data());
                __builtin_prefetch(hosts[p + 2].host.data());
            }
        }
    }
}

// A host built again goes into `hosts_` in its place (or at the end); one no cluster names any more goes.
void SnapshotBuilder::apply(std::string name, std::shared_ptr<const HostBlock> b) {
    ++last_.built;
    auto at = host_at_.find(name);
    if (b && at != host_at_.end()) {
        hosts_[at->second] = std::move(b);
    } else if (b) {
        host_at_.emplace(std::move(name), hosts_.size());
        hosts_.push_back(std::move(b));
    } else if (at != host_at_.end()) {  // gone: the last host takes its place
        size_t i = at->second;
        host_at_.erase(at);
        if (i + 1 != hosts_.size()) {
            hosts_[i] = std::move(hosts_.back());
            host_at_[hosts_[i]->key] = i;
        }
        hosts_.pop_back();
    }
}

namespace {

// RDATA in wire form for a static record; false when it cannot be (a bad name or address, too long).
bool record_rdata(const ZoneRecord& z, std::string& out) {
    out.clear();
    if (z.type == wire::type::NS) {
        auto w = z.data.size() == 1 ? wire::name_to_wire(z.data[0]) : std::nullopt;
        if (!w) return false;
        out = *w;
        return true;
    }
    if (z.type == wire::type::A || z.type == wire::type::AAAA) {
        RData rd;
        uint16_t t = 0;
        if (z.data.size() != 1 || !address_rdata(z.data[0], rd, t) || t != z.type) return false;
        out = rd.wire;
        return true;
    }
    if (z.type != wire::type::TXT) return false;
    for (const auto& d : z.data) {  // each string in pieces of at most 255 bytes
        size_t at = 0;
        do {
            size_t n = std::min<size_t>(255, d.size() - at);
            out += static_cast<char>(n);
            out.append(d, at, n);
            at += n;
        } while (at < d.size());
    }
    return out.size() <= 65535;
}

}  // namespace

// Static records every cluster's DNSRecords publish, as zone data. Each server builds the same from the
// same view (the records sorted, duplicates once). A name is the config's when its zone data (SOA, NS,
// records) holds it, and a host's when a host has that name: neither is changed. NS never at a zone's apex
// or a wildcard; TXT never at or below a delegation; addresses only below one (glue). The TTL of a set is
// its first record's. `published` (glbd's own) go first, and take their name and type from the clusters'.
void SnapshotBuilder::zone_data(const SharedView& view, const std::vector<ZoneRecord>& published, Snapshot& s) const {
    std::vector<const ZoneRecord*> all;
    std::string rdata;
    std::set<std::pair<std::string, uint16_t>> own;
    for (const ZoneRecord& z : published) {
        auto name = wire::name_to_wire(z.name);
        const Zone* found = name ? s.find_zone(*name) : nullptr;
        if (!found || *name == found->origin || host_at_.count(z.name) || !record_rdata(z, rdata)) continue;
        Zone& zone = s.zones[static_cast<size_t>(found - s.zones.data())];
        auto node = zone.nodes.find(*name);
        if (node != zone.nodes.end() && !node->second.rrsets.empty()) continue;  // the config's
        own.emplace(z.name, z.type);
        add_zone_record(zone, *name, z.type, z.ttl, rdata);
    }
    for (const auto& c : view) {
        for (const auto& z : c->records) {
            if (!own.count({z.name, z.type})) all.push_back(&z);
        }
    }
    if (all.empty()) return;
    auto rank = [](uint16_t t) { return t == wire::type::NS ? 0 : t == wire::type::TXT ? 1 : 2; };
    std::sort(all.begin(), all.end(), [&](const ZoneRecord* a, const ZoneRecord* b) {
        return rank(a->type) != rank(b->type) ? rank(a->type) < rank(b->type) : a->before(*b);
    });
    all.erase(std::unique(all.begin(), all.end(), [](const ZoneRecord* a, const ZoneRecord* b) { return *a == *b; }),
              all.end());
    std::set<std::string> added;  // names (wire) this step gave data
    for (const auto& [name, type] : own) added.insert(*wire::name_to_wire(name));
    for (const ZoneRecord* z : all) {
        auto name = wire::name_to_wire(z->name);
        const Zone* found = name ? s.find_zone(*name) : nullptr;
        Zone* zone = found ? &s.zones[static_cast<size_t>(found - s.zones.data())] : nullptr;
        if (!zone || *name == zone->origin || host_at_.count(z->name) || !record_rdata(*z, rdata)) continue;
        auto node = zone->nodes.find(*name);
        bool configs = node != zone->nodes.end() && !node->second.rrsets.empty() && !added.count(*name);
        if (configs) continue;
        bool cut = zone->under_cut(*name, false);
        bool wildcard = z->name.rfind("*.", 0) == 0;
        if (z->type == wire::type::NS && (wildcard || cut)) continue;
        if (z->type == wire::type::TXT && (cut || (node != zone->nodes.end() && node->second.find(wire::type::NS))))
            continue;
        if ((z->type == wire::type::A || z->type == wire::type::AAAA) && !cut) continue;
        add_zone_record(*zone, *name, z->type, z->ttl, rdata);
        added.insert(*name);
    }
}

// The snapshot's host list and, per zone, its name index over the zone's names and hosts.
void SnapshotBuilder::finish(Snapshot& s) {
    s.hosts = hosts_;
    std::vector<std::vector<std::pair<const HostBlock*, int>>> by_zone(s.zones.size());
    for (size_t i = 0; i < hosts_.size(); ++i) {
        const HostBlock& b = *hosts_[i];
        s.counters = std::max(s.counters, b.counters);
        by_zone[b.zone].emplace_back(&b, static_cast<int>(i));
    }
    // A signed zone's static RRsets (those that did not change keep their signatures), then the first time any
    // signature of the snapshot is due to be made again.
    uint32_t due = 0;
    auto first = [&due](uint32_t t) {
        if (t != 0) due = due == 0 ? t : std::min(due, t);
    };
    for (auto& z : s.zones) first(signatures_.sign_zone(z, s.signed_at));
    signatures_.sweep();
    for (const auto& b : hosts_) first(b->sigs.refresh_at);
    s.resign_at = resign_at_ = due;
    for (size_t z = 0; z < s.zones.size(); ++z) s.zones[z].freeze(by_zone[z]);
    last_.hosts = s.hosts.size();
}

std::shared_ptr<Snapshot> build_snapshot(const model::Served& served, const GlobalView& view,
                                         std::shared_ptr<const geo::GeoDb> geo, uint32_t serial,
                                         const CounterIds& counter_ids) {
    SnapshotBuilder b;
    return b.build(served, share(view), std::move(geo), serial, counter_ids);
}

}  // namespace glbd
