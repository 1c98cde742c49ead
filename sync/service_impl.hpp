// sync/service_impl — the sync service (internal to sync/): the core every part shares (core.hpp), one of each
// part that owns the rest (serving, pulls, beats, membership, liveness, stateDir), and the sync thread's loop
// that drives them (service.cpp: start, stop, a round every syncInterval, this instance's own state set by the
// control thread).
#pragma once

#include <uv.h>

#include <memory>
#include <thread>

#include "sync/core.hpp"
#include "sync/liveness.hpp"
#include "sync/membership.hpp"
#include "sync/state_dir.hpp"
#include "sync/transfer/beats.hpp"
#include "sync/transfer/pulls.hpp"
#include "sync/transfer/serving.hpp"

namespace glbd::sync {

struct Service::Impl : Core {
    StateDir state_dir{*this};
    Liveness liveness{*this, *this};
    Serving serving{*this};
    Membership membership{*this, *this};
    Pulls pulls{*this, *this};
    Beats beats{*this, *this};
    std::thread thread;
    std::unique_ptr<UdpDatagrams> udp;  // the heartbeats' sockets, unless a test gave its own Datagrams

    Impl(const conf::Config& c, std::function<void()> cb, Seams seams, std::optional<StateFileRead> state_read);
    // ---- own state (control thread)
    void set_own_hosts(HostList hosts, RecordList records, std::vector<SharedCheck> checks);
    void set_own_outside(OutsideMap outside);
    Status set_override(const std::string& target, const std::string& state);
    Status forget_instance(const std::string& origin);
    void set_records_group(const std::string& group);
    Status set_active_groups(const std::optional<std::vector<std::string>>& groups);  // nullopt: clear
    // A reload: new members, key, zones or intervals; what is known stays.
    void reconfigure(const conf::Config& c);
    // ---- the sync loop
    void start();
    void stop();
    void on_wake();
};

}  // namespace glbd::sync
