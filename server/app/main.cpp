// glbd command line: serve, check, demo, keygen, ds, and the admin endpoint's clients.
#include <malloc.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "conf/config.hpp"
#include "geo/geo.hpp"
#include "resolver/dnssec/keys.hpp"
#include "resolver/wire/text.hpp"
#include "server/app/daemon.hpp"
#include "server/app/options.hpp"
#include "server/app/peer_keys.hpp"
#include "server/app/status.hpp"
#include "server/dnstap/dnstap.hpp"

namespace glbd {
int run_demo(const std::string& self);
}

namespace {

constexpr const char* kUsage = R"(glbd - authoritative DNS for global load balancing across clusters

Usage:
  glbd serve [--config] FILE   run the server in the foreground (logs to stderr)
  glbd check [--config] FILE   validate a config; exit 0 when valid, 1 with every error listed
  glbd demo                    run a self-contained demo on loopback and print what to dig
  glbd status [--admin H:P] [--host NAME | --prefix P] [--unhealthy] [--cluster ID]
                               print the global view from a server's admin endpoint: clusters,
                               peers, and the hosts asked for (all when there are at most 50)
                               (default 127.0.0.1:9153; token from GLBD_ADMIN_TOKEN)
  glbd explain NAME --client IP|--subnet CIDR [--type A] [--admin H:P]
                               why a client gets the answer it gets (zone, location, groups, answer)
  glbd explain --dnstap FILE   every answer a dnstap file logged, with why it was chosen then
  glbd groups [set GROUP... | add GROUP | remove GROUP | clear] [--force] [--admin H:P]
                               dns-operator's active failover groups: shown, or set and shared
                               with every peer (served as kuadrant-active-groups.<zone>; holds
                               whatever a groups record says until `clear`); a group no cluster
                               is in is refused without --force
  glbd forget CLUSTER/INSTANCE [--admin H:P]
                               forget a dead instance on every server (its status, peers, metrics
                               and stateDir entry) until it runs again
  glbd probe [--admin H:P] [--path /healthz]
                               exit 0 when the admin endpoint answers 200 (container probes)
  glbd keygen [NAME]           print a fresh TSIG key block for peers.key
  glbd keygen --secret-only    print only a fresh secret, as peers.key.secretFile holds it
  glbd keygen --dnssec ZONE [--algorithm 13|15] [--dir DIR]
                               write a DNSSEC key pair (a CSK; default algorithm 13) for
                               zones[].dnssec.keys in DIR (default .) and print its path
  glbd ds ZONE [--config] FILE print the DS records (SHA-256) of the zone's KSKs/CSKs, for the parent
  glbd --version | --help

Signals: SIGHUP reloads the config (validated first), SIGTERM/SIGINT stop.
Exit codes: 0 ok, 1 bad config or usage, 2 runtime failure (e.g. cannot bind).
)";

// A usage error: one line on standard error, exit 1 (the whole usage only for `glbd` alone, or --help).
int usage_error(const std::string& msg) {
    std::fprintf(stderr, "glbd: %s (glbd --help for usage)\n", msg.c_str());
    return 1;
}

// The config file and the other words of a command line: --config FILE, -c FILE and --config=FILE name it,
// and so does the first word that is not an option (`glbd check glbd.yaml`).
struct ConfigArgs {
    std::string path;
    std::vector<std::string> rest;  // every other word, in order
};

ConfigArgs config_args(const std::vector<std::string>& args, bool positional) {
    ConfigArgs out;
    for (size_t i = 0; i < args.size(); ++i) {
        if ((args[i] == "--config" || args[i] == "-c") && i + 1 < args.size() && out.path.empty()) {
            out.path = args[++i];
        } else if (args[i].rfind("--config=", 0) == 0 && out.path.empty()) {
            out.path = args[i].substr(9);
        } else if (positional && out.path.empty() && !args[i].empty() && args[i][0] != '-') {
            out.path = args[i];
        } else {
            out.rest.push_back(args[i]);
        }
    }
    return out;
}

glbd::conf::LoadResult load_or_report(const std::string& path, const glbd::conf::LoadHooks& hooks = {}) {
    auto r = glbd::conf::load_file(path, hooks);
    for (const auto& e : r.errors) std::fprintf(stderr, "%s\n", e.str().c_str());
    return r;
}

// A fresh 32-byte TSIG secret: the peers.key block, or (secret_only) the secret alone, as secretFile holds it.
int keygen(const std::string& name, bool secret_only) {
    unsigned char key[32];
    std::ifstream rnd("/dev/urandom", std::ios::binary);
    if (!rnd.read(reinterpret_cast<char*>(key), sizeof key)) {
        std::fprintf(stderr, "glbd: cannot read /dev/urandom\n");
        return 2;
    }
    std::string b64 = glbd::wire::base64_encode(std::string_view(reinterpret_cast<char*>(key), sizeof key));
    if (secret_only) return std::printf("%s\n", b64.c_str()) > 0 ? 0 : 2;
    std::printf("peers:\n  key:\n    name: %s\n    algorithm: hmac-sha256\n    secret: \"%s\"\n", name.c_str(),
                b64.c_str());
    return 0;
}

// A zone named on the command line as the config holds it: lower case, no trailing dot.
std::string zone_name(std::string zone) {
    std::transform(zone.begin(), zone.end(), zone.begin(), [](unsigned char c) { return std::tolower(c); });
    if (zone.size() > 1 && zone.back() == '.') zone.pop_back();
    return zone;
}

// glbd keygen --dnssec ZONE [--algorithm 13|15] [--dir DIR]: a fresh CSK pair written, its path printed.
int dnssec_keygen(const std::vector<std::string>& args) {
    std::string zone, dir = ".";
    int algorithm = glbd::dnssec::kEcdsaP256Sha256;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--dnssec" && i + 1 < args.size() && zone.empty()) {
            zone = args[++i];
        } else if (args[i] == "--algorithm" && i + 1 < args.size()) {
            const std::string& a = args[++i];
            algorithm = a == "13" || a == "ECDSAP256SHA256" ? glbd::dnssec::kEcdsaP256Sha256
                        : a == "15" || a == "ED25519"       ? glbd::dnssec::kEd25519
                                                            : -1;
            if (algorithm < 0) return usage_error("keygen: --algorithm is 13 (ECDSAP256SHA256) or 15 (ED25519)");
        } else if (args[i] == "--dir" && i + 1 < args.size()) {
            dir = args[++i];
        } else {
            return usage_error("keygen --dnssec: unknown argument \"" + args[i] + "\"");
        }
    }
    if (zone.empty()) return usage_error("keygen --dnssec: give the ZONE");
    zone = zone_name(zone);
    std::string error;
    std::string path = glbd::dnssec::generate(zone, static_cast<uint8_t>(algorithm), dir, error);
    if (path.empty()) {
        std::fprintf(stderr, "glbd: %s\n", error.c_str());
        return 2;
    }
    std::printf("%s\n", path.c_str());
    return 0;
}

// glbd ds ZONE --config FILE: the DS of each KSK or CSK of the zone, as the parent zone holds it.
int ds_command(const std::vector<std::string>& args) {
    // ds ZONE FILE: the zone comes first, so the file is the second word that is not an option.
    std::string zone;
    std::vector<std::string> after_zone;
    for (size_t i = 0; i < args.size(); ++i) {
        if ((args[i] == "--config" || args[i] == "-c") && i + 1 < args.size()) {
            after_zone.push_back(args[i]);
            after_zone.push_back(args[++i]);
        } else if (zone.empty() && !args[i].empty() && args[i][0] != '-') {
            zone = args[i];
        } else {
            after_zone.push_back(args[i]);
        }
    }
    auto [path, rest] = config_args(after_zone, true);
    if (!rest.empty()) return usage_error("ds: unknown argument \"" + rest[0] + "\"");
    if (zone.empty() || path.empty()) return usage_error("ds needs a ZONE and a config FILE: glbd ds ZONE FILE");
    zone = zone_name(zone);
    auto r = load_or_report(path);
    if (!r.config) {
        std::fprintf(stderr, "%s: %zu error(s)\n", path.c_str(), r.errors.size());
        return 1;
    }
    for (const auto& z : r.config->zones) {
        if (z.origin != zone) continue;
        if (!z.dnssec) {
            std::fprintf(stderr, "glbd: zone %s is not signed (no dnssec.keys in %s)\n", zone.c_str(), path.c_str());
            return 1;
        }
        for (const auto& key : z.dnssec->keys) {
            if (key->sep()) std::printf("%s\n", key->ds().c_str());
        }
        return 0;
    }
    std::fprintf(stderr, "glbd: no zone %s in %s\n", zone.c_str(), path.c_str());
    return 1;
}

// glbd status / glbd probe: clients of a server's admin endpoint.
int admin_client(const std::string& cmd, const std::vector<std::string>& args) {
    std::string admin = "127.0.0.1:9153", path = "/healthz", hosts_query, exact_host;
    auto filter = [&](const std::string& f) { hosts_query += (hosts_query.empty() ? "" : "&") + f; };
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--admin" && i + 1 < args.size()) {
            admin = args[++i];
        } else if (cmd == "status" && args[i] == "--host" && i + 1 < args.size()) {
            exact_host = args[++i];
            filter("prefix=" + glbd::query_escape(exact_host));
        } else if (cmd == "status" && args[i] == "--prefix" && i + 1 < args.size()) {
            filter("prefix=" + glbd::query_escape(args[++i]));
        } else if (cmd == "status" && args[i] == "--cluster" && i + 1 < args.size()) {
            filter("cluster=" + glbd::query_escape(args[++i]));
        } else if (cmd == "status" && args[i] == "--unhealthy") {
            filter("unhealthy=1");
        } else if (args[i].rfind("--admin=", 0) == 0) {
            admin = args[i].substr(8);
        } else if (cmd == "probe" && args[i] == "--path" && i + 1 < args.size()) {
            path = args[++i];
        } else {
            return usage_error(cmd + ": unknown argument \"" + args[i] + "\"");
        }
    }
    const char* token = std::getenv("GLBD_ADMIN_TOKEN");
    return cmd == "status" ? glbd::run_status(admin, token ? token : "", hosts_query, exact_host)
                           : glbd::run_probe(admin, path, token ? token : "");
}

// glbd groups [set G... | add G | remove G | clear] [--admin H:P]: dns-operator's active groups, shown or changed.
int groups_command(const std::vector<std::string>& args) {
    std::string admin = "127.0.0.1:9153", verb;
    std::vector<std::string> names;
    bool force = false;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--force") {
            force = true;
        } else if (args[i] == "--admin" && i + 1 < args.size()) {
            admin = args[++i];
        } else if (args[i].rfind("--admin=", 0) == 0) {
            admin = args[i].substr(8);
        } else if (verb.empty() && names.empty() &&
                   (args[i] == "set" || args[i] == "add" || args[i] == "remove" || args[i] == "clear")) {
            verb = args[i];
        } else if (!verb.empty() && args[i].rfind("--", 0) != 0) {
            names.push_back(args[i]);
        } else {
            return usage_error("groups: unknown argument \"" + args[i] + "\"");
        }
    }
    if ((verb == "add" || verb == "remove") && names.size() != 1) return usage_error("groups " + verb + ": one group");
    if (verb == "clear" && !names.empty()) return usage_error("groups clear: no group names");
    if (force && verb != "set" && verb != "add") return usage_error("groups: --force goes with set or add");
    const char* token = std::getenv("GLBD_ADMIN_TOKEN");
    return glbd::run_groups(admin, token ? token : "", verb, names, force);
}

// glbd forget CLUSTER/INSTANCE [--admin H:P]: a dead instance forgotten by every server.
int forget_command(const std::vector<std::string>& args) {
    std::string admin = "127.0.0.1:9153", origin;
    for (size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--admin" && i + 1 < args.size()) {
            admin = args[++i];
        } else if (args[i].rfind("--admin=", 0) == 0) {
            admin = args[i].substr(8);
        } else if (origin.empty() && args[i].rfind("--", 0) != 0) {
            origin = args[i];
        } else {
            return usage_error("forget: unknown argument \"" + args[i] + "\"");
        }
    }
    if (origin.find('/') == std::string::npos)
        return usage_error("forget: give CLUSTER/INSTANCE, as glbd status names it");
    const char* token = std::getenv("GLBD_ADMIN_TOKEN");
    return glbd::run_forget(admin, token ? token : "", origin);
}

int explain_command(const std::vector<std::string>& args) {
    if (args.size() == 2 && args[0] == "--dnstap") return glbd::dnstap::print_responses(args[1], stdout);
    if (args.empty() || args[0].rfind("--", 0) == 0) return usage_error("explain: give a NAME");
    std::string admin = "127.0.0.1:9153", query = "name=" + glbd::query_escape(args[0]);
    for (size_t i = 1; i < args.size(); ++i) {
        if (args[i] == "--admin" && i + 1 < args.size()) {
            admin = args[++i];
        } else if (args[i] == "--client" && i + 1 < args.size()) {
            query += "&client=" + glbd::query_escape(args[++i]);
        } else if (args[i] == "--subnet" && i + 1 < args.size()) {
            query += "&subnet=" + glbd::query_escape(args[++i]);
        } else if (args[i] == "--type" && i + 1 < args.size()) {
            query += "&type=" + glbd::query_escape(args[++i]);
        } else {
            return usage_error("explain: unknown argument \"" + args[i] + "\"");
        }
    }
    const char* token = std::getenv("GLBD_ADMIN_TOKEN");
    return glbd::run_explain(admin, query, token ? token : "");
}

// glbd check / glbd serve: the same load of the config file; check stops there (after loading the geo
// database exactly as serve would: a file that serve would refuse fails here).
int config_command(const std::string& cmd, const std::vector<std::string>& args) {
    auto [path, rest] = config_args(args, true);
    if (!rest.empty()) return usage_error(cmd + ": unknown argument \"" + rest[0] + "\"");
    if (path.empty()) return usage_error(cmd + " needs a config FILE: glbd " + cmd + " FILE");
    // serve: stateDir's file is read on a thread of its own from the moment the parser reaches its key.
    glbd::sync::StateReadAhead state_read;
    glbd::conf::LoadHooks hooks;
    if (cmd == "serve") hooks.state_dir = [&state_read](const std::string& dir) { state_read.begin(dir); };
    auto r = load_or_report(path, hooks);
    if (!r.config) {
        std::fprintf(stderr, "%s: %zu error(s)\n", path.c_str(), r.errors.size());
        return 1;
    }
    if (cmd == "check") {
        std::string geo;
        try {
            geo = glbd::open_geo(*r.config)->describe();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: %s\n%s: 1 error(s)\n", path.c_str(), e.what(), path.c_str());
            return 1;
        }
        std::printf("%s: ok (%zu zone(s), %zu host(s); geo: %s)\n", path.c_str(), r.config->zones.size(),
                    r.config->hosts.size(), geo.c_str());
        // A stateDir whose parent is missing too is made whole at start (when glbd may): often a typo.
        if (const std::filesystem::path dir(r.config->state_dir); !dir.empty()) {
            std::error_code ec;
            const auto parent = dir.parent_path().empty() ? std::filesystem::path(".") : dir.parent_path();
            if (!std::filesystem::exists(dir, ec) && !std::filesystem::exists(parent, ec)) {
                std::printf(
                    "  warning: stateDir %s: neither it nor %s exists; glbd makes both at start (is the "
                    "path right?)\n",
                    dir.c_str(), parent.c_str());
            }
        }
        bool signed_zones = false;
        for (const auto& z : r.config->zones) {
            if (!z.dnssec) continue;
            std::printf("  zone %s: DNSSEC keys: %s\n", z.origin.c_str(),
                        glbd::dnssec::describe_keys(z.dnssec->keys).c_str());
            signed_zones = true;
        }
        // A signed zone's keys must be every cluster's: each peer is asked what it publishes (warnings only,
        // the exit code stays 0: a peer may be down, or not yet reloaded during a key change).
        if (signed_zones) {
            for (const auto& line : glbd::peer_key_report(*r.config, 1000)) std::printf("  %s\n", line.c_str());
        }
        return 0;
    }
    glbd::setup_logging(r.config->log.level, r.config->log.format);
    glbd::Daemon daemon(std::move(*r.config), path, std::move(state_read));
    return daemon.run();
}

}  // namespace

int main(int argc, char** argv) {
    // A peer that closes its end mid-answer must cost one write error, not the process.
    std::signal(SIGPIPE, SIG_IGN);
    // Large arrays (a cluster's host list, the name index, a transfer's buffers) straight from the kernel and
    // back to it when freed. glibc's threshold otherwise grows to each freed block's size (up to 32 MB), after
    // which those arrays come from the heap and leave holes a full rebuild cannot reuse: at 10,000 hosts x
    // 20 clusters the peak during a full rebuild was 152 MB with it, 143 MB with it fixed (bench/scale.sh).
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        std::fprintf(stderr, "glbd: no command given\n\n%s", kUsage);
        return 1;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    if (cmd == "--version" || cmd == "version") {
        std::printf("glbd %s\n", GLBD_VERSION);
        return 0;
    }
    if (cmd == "keygen" && std::find(args.begin(), args.end(), "--dnssec") != args.end()) return dnssec_keygen(args);
    if (cmd == "ds") return ds_command(args);
    if (cmd == "keygen") {
        bool secret_only = std::find(args.begin(), args.end(), "--secret-only") != args.end();
        std::string name = "glb-sync";
        for (const auto& a : args) {
            if (a != "--secret-only") name = a;
        }
        return keygen(name, secret_only);
    }
    if (cmd == "status" || cmd == "probe") return admin_client(cmd, args);
    if (cmd == "explain") return explain_command(args);
    if (cmd == "groups") return groups_command(args);
    if (cmd == "forget") return forget_command(args);
    if (cmd == "demo") {
        std::error_code ec;
        std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
        return glbd::run_demo(ec ? argv[0] : self);
    }
    if (cmd == "check" || cmd == "serve") return config_command(cmd, args);
    return usage_error("unknown command \"" + cmd + "\"");
}
