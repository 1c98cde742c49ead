// server/daemon — the running process: config in, snapshot published, sockets served, signals handled.
// Runs on the main thread's libuv loop (the control thread); query threads only see published snapshots.
// Health results arrive from the checker's thread through a uv_async and are coalesced: at most one
// snapshot every kMinRebuild.
#pragma once

#include <uv.h>

#include <chrono>
#include <memory>
#include <string>

#include "conf/config.hpp"
#include "server/publisher.hpp"
#include "server/server.hpp"
#include "sync/health.hpp"
#include "sync/view.hpp"

namespace glbd {

class Daemon {
public:
    static constexpr std::chrono::milliseconds kMinRebuild{250};

    // `path` is re-read on SIGHUP; empty for an embedded config (demo), which then cannot reload.
    Daemon(conf::Config config, std::string path);
    ~Daemon();
    // Builds the first snapshot, binds, and runs until SIGTERM/SIGINT. Returns the exit code.
    int run(const std::string& banner = "");
    // Validates `path` again and swaps in the new snapshot; a bad file keeps the running config.
    bool reload();
    // Drains or forces a cluster or an endpoint ("eu-1", "eu-1/192.0.2.10"; "down", "up", "auto").
    // Returns an error message, or "" when applied. Control thread only.
    std::string set_override(const std::string& target, const std::string& state);

private:
    std::shared_ptr<const Snapshot> build(const conf::Config& c, uint32_t serial);
    uint32_t next_serial();
    void start_checker(const health::States& previous);
    void request_rebuild();
    void rebuild();

    conf::Config config_;
    std::string path_;
    Publisher publisher_;
    std::unique_ptr<DnsServer> server_;
    std::unique_ptr<health::Checker> checker_;
    Overrides overrides_;
    uint32_t serial_ = 0;
    uv_loop_t* loop_ = nullptr;
    uv_async_t changed_{};
    uv_timer_t rebuild_timer_{};
    uint64_t last_build_ms_ = 0;
};

void setup_logging(const std::string& level, const std::string& format);

}  // namespace glbd
