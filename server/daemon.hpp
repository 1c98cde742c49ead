// server/daemon — the running process: config in, snapshot published, sockets served, signals handled.
// Runs on the main thread's libuv loop; query threads only ever see published snapshots.
#pragma once

#include <memory>
#include <string>

#include "conf/config.hpp"
#include "server/publisher.hpp"
#include "server/server.hpp"

namespace glbd {

class Daemon {
public:
    // `path` is re-read on SIGHUP; empty for an embedded config (demo), which then cannot reload.
    Daemon(conf::Config config, std::string path);
    // Builds the first snapshot, binds, and runs until SIGTERM/SIGINT. Returns the exit code.
    int run(const std::string& banner = "");
    // Validates `path` again and swaps in the new snapshot; a bad file keeps the running config.
    bool reload();

private:
    std::shared_ptr<const Snapshot> build(const conf::Config& c, uint32_t serial);
    uint32_t next_serial();

    conf::Config config_;
    std::string path_;
    Publisher publisher_;
    std::unique_ptr<DnsServer> server_;
    uint32_t serial_ = 0;
};

void setup_logging(const std::string& level, const std::string& format);

}  // namespace glbd
