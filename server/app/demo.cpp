// glbd demo — three clusters on loopback (IE, US as the default geo, GEO-OC), synced over DNS with a
// fresh TSIG key, health-checking HTTP targets that this process serves itself. Needs no file.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "conf/config.hpp"
#include "geo/location_db.hpp"
#include "resolver/base/fd.hpp"
#include "resolver/base/uv_handle.hpp"
#include "resolver/wire/query.hpp"
#include "resolver/wire/text.hpp"
#include "server/app/dns_ask.hpp"
#include "server/app/status.hpp"

namespace glbd {
namespace {

constexpr int kDnsPort = 5300;
constexpr int kTargetPort = 8080;

struct Cluster {
    const char* id;
    const char* server;                  // where its glbd answers
    std::vector<const char*> endpoints;  // its targets (served by this process)
    const char* lb;
};
const std::array<Cluster, 3> kClusters = {{
    {"ie", "127.0.0.11", {"127.0.1.11", "127.0.1.12"}, "{weight: 100, geo: IE}"},
    {"us", "127.0.0.12", {"127.0.1.21"}, "{weight: 100, geo: US, defaultGeo: true}"},
    {"oc", "127.0.0.13", {"127.0.1.31"}, "{weight: 100, geo: GEO-OC}"},
}};

// Debian's location database (libloc-database), when installed, places real client networks too.
constexpr const char* kLocationDb = "/var/lib/location/database.db";
bool has_location_db() { return geo::is_location_db(kLocationDb); }

std::string config_for(const Cluster& c, const std::string& secret, const std::string& dir) {
    std::string eps;
    for (const char* e : c.endpoints) eps += std::string(eps.empty() ? "" : ", ") + e;
    std::string out = std::string("cluster: {id: ") + c.id + ", instance: " + c.id + "-demo}\n" + "listen: {dns: [\"" +
                      c.server + ":" + std::to_string(kDnsPort) + "\"]}\n" + "admin: {listen: \"" + c.server +
                      ":9153\"}\n" +
                      "threads: 1\n"
                      "geoip:\n  networks:\n    10.1.0.0/16: IE\n    10.3.0.0/16: US\n    10.2.0.0/16: GEO-OC\n" +
                      (has_location_db() ? std::string("  database: ") + kLocationDb + "\n" : std::string()) +
                      "zones:\n  - origin: glb.example.test\n    ttl: 300\n    nameservers:\n";
    for (const auto& k : kClusters) {
        out += std::string("      - {name: ns-") + k.id + ".glb.example.test, addresses: [" + k.server + "]}\n";
    }
    out +=
        "    records: |\n"
        "      @      IN MX    10 mail\n"
        "      mail   IN A     192.0.2.25\n"
        "      www    IN CNAME shop\n"
        "      info   IN TXT   \"glbd demo zone\"\n"
        "      *.apps IN A     192.0.2.99\n"
        "hosts:\n"
        "  - name: shop.glb.example.test\n    ttl: 60\n    endpoints: [" +
        eps + "]\n" + "    loadBalancing: " + c.lb + "\n" +
        "    healthCheck: {protocol: HTTP, port: " + std::to_string(kTargetPort) +
        ", path: /healthz, interval: 1s, timeout: 500ms, failureThreshold: 2}\n" +
        "  - name: api.glb.example.test\n    ttl: 30\n    endpoints: [" + c.endpoints[0] + "]\n" +
        "peers:\n  key: {name: glb-demo, secret: \"" + secret + "\"}\n  members:\n";
    for (const auto& k : kClusters)
        out += std::string("    - address: \"") + k.server + ":" + std::to_string(kDnsPort) + "\"\n";
    out += "  syncInterval: 1s\n  deadAfter: 5s\nstateDir: " + dir + "/state-" + c.id + "\n";
    return out;
}

// The health targets: every endpoint answers GET with 200 (HTTP/1.0, then closes).
struct Targets {
    uv_loop_t* loop;
    std::vector<UvHandle<uv_tcp_t>> listeners;  // closed (and freed once the loop runs) with the Targets

    // 0, or the libuv error of the first target that cannot listen (UV_EADDRINUSE: another demo runs).
    int start(uv_loop_t* l) {
        loop = l;
        for (const auto& c : kClusters) {
            for (const char* ep : c.endpoints) {
                uv_tcp_t* t = listeners.emplace_back(make_uv_handle<uv_tcp_t>()).get();
                uv_tcp_init(loop, t);
                sockaddr_in sa{};
                uv_ip4_addr(ep, kTargetPort, &sa);
                int rc = uv_tcp_bind(t, reinterpret_cast<sockaddr*>(&sa), 0);
                if (rc == 0) rc = uv_listen(reinterpret_cast<uv_stream_t*>(t), 64, on_connection);
                if (rc == UV_EADDRINUSE) {
                    std::fprintf(stderr,
                                 "glbd demo: another demo is running (%s:%d is taken); stop it with Ctrl-C where it "
                                 "runs\n",
                                 ep, kTargetPort);
                    return rc;
                }
                if (rc != 0) {
                    std::fprintf(stderr, "glbd demo: cannot listen on %s:%d: %s\n", ep, kTargetPort, uv_strerror(rc));
                    return rc;
                }
            }
        }
        return 0;
    }

    static void on_connection(uv_stream_t* server, int status) {
        if (status < 0) return;
        UvHandle<uv_tcp_t> client = make_uv_handle<uv_tcp_t>();
        uv_tcp_init(server->loop, client.get());
        if (uv_accept(server, reinterpret_cast<uv_stream_t*>(client.get())) != 0) return;  // closed and freed
        uv_read_start(
            reinterpret_cast<uv_stream_t*>(client.release()),  // its callbacks end it
            [](uv_handle_t*, size_t, uv_buf_t* buf) {
                static char scratch[4096];
                *buf = uv_buf_init(scratch, sizeof scratch);
            },
            [](uv_stream_t* s, ssize_t n, const uv_buf_t*) {
                if (n < 0) return close_and_free(reinterpret_cast<uv_tcp_t*>(s));
                static const char kReply[] = "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
                auto w = std::make_unique<uv_write_t>();
                uv_buf_t b = uv_buf_init(const_cast<char*>(kReply), sizeof kReply - 1);
                uv_read_stop(s);
                int rc = uv_write(w.get(), s, &b, 1, [](uv_write_t* req, int) {
                    std::unique_ptr<uv_write_t> done(req);
                    close_and_free(reinterpret_cast<uv_tcp_t*>(req->handle));
                });
                if (rc != 0) return close_and_free(reinterpret_cast<uv_tcp_t*>(s));
                static_cast<void>(w.release());  // the write's callback has it
            });
    }
};

// The A records `server` answers for `name` from a client in `subnet`/16, space-separated.
std::string ask(const char* server, const char* name, const char* subnet) {
    wire::QueryOptions o;
    o.id = 0x1234;
    Prefix ecs;
    if (Address::parse(subnet, ecs.address)) ecs.length = 16, o.client_subnet = ecs;
    SocketAddress to;
    Address::parse(server, to.address);
    to.port = kDnsPort;
    auto answer =
        dns_ask(to, wire::make_query(wire::name_to_wire(name).value_or(std::string(1, '\0')), wire::type::A, o), 100);
    std::string out;
    if (!answer) return out;
    wire::ResponseRecords records(answer->data(), answer->size());
    wire::Record rr;
    wire::Section section{};
    while (records.next(rr, section)) {
        if (section != wire::Section::answer || rr.type != wire::type::A || rr.rdlen != 4) continue;
        Address a;
        std::memcpy(a.bytes.data(), answer->data() + rr.rdata, 4);
        out += (out.empty() ? "" : " ") + a.str();
    }
    return out;
}

// A fresh private directory (mkdtemp: mode 0700, a name nobody could have planted): the configs in it hold
// the TSIG secret. Empty when it cannot be made.
std::string private_dir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "glbd-demo-XXXXXX").string();
    if (mkdtemp(tmpl.data())) return tmpl;
    std::fprintf(stderr, "glbd demo: cannot create a directory in %s: %s\n",
                 std::filesystem::temp_directory_path().c_str(), std::strerror(errno));
    return "";
}

// Starts `self serve --config path` with its output in `log`; null when it cannot be started.
// The servers still running, and whether the demo is stopping them (then an exit is no news).
int g_running = 0;
bool g_stopping = false;

uv_process_t* spawn_server(uv_loop_t* loop, const std::string& self, const std::string& path, const std::string& log) {
    static std::deque<std::string> keep;  // argv strings must outlive uv_spawn
    keep.push_back(self), keep.push_back("serve"), keep.push_back("--config"), keep.push_back(path);
    char* args[] = {keep[keep.size() - 4].data(), keep[keep.size() - 3].data(), keep[keep.size() - 2].data(),
                    keep[keep.size() - 1].data(), nullptr};
    uv_stdio_container_t stdio[3];
    const Fd logfd(::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644));
    stdio[0].flags = UV_IGNORE;
    stdio[1].flags = UV_INHERIT_FD, stdio[1].data.fd = logfd.get();
    stdio[2].flags = UV_INHERIT_FD, stdio[2].data.fd = logfd.get();
    uv_process_options_t opts{};
    opts.file = self.c_str();
    opts.args = args;
    opts.stdio = stdio;
    opts.stdio_count = 3;
    opts.exit_cb = [](uv_process_t* p, int64_t status, int term_signal) {
        --g_running;
        if (!g_stopping) {
            std::fprintf(stderr, "glbd demo: a cluster's server (pid %d) exited with %lld%s\n", p->pid,
                         static_cast<long long>(status), status || term_signal ? "; its log ends:" : "");
        }
        if (!g_stopping && (status || term_signal)) {  // its log goes with the demo's directory: its end is here
            std::ifstream in(*static_cast<const std::string*>(p->data));
            std::deque<std::string> tail;
            for (std::string line; std::getline(in, line);) {
                tail.push_back(line);
                if (tail.size() > 20) tail.pop_front();
            }
            for (const auto& line : tail) std::fprintf(stderr, "  %s\n", line.c_str());
        }
        close_and_free(p);  // a server's handle ends with its exit (the demo's list of them only looks)
    };
    UvHandle<uv_process_t> proc = make_uv_handle<uv_process_t>();
    proc->data = &keep.emplace_back(log);  // for exit_cb (a deque: the strings never move)
    int rc = uv_spawn(loop, proc.get(), &opts);
    // logfd closes here: the child holds its own copy
    if (rc != 0) {
        std::fprintf(stderr, "glbd demo: cannot start %s: %s\n", self.c_str(), uv_strerror(rc));
        return nullptr;  // closed and freed (libuv initialised it even so)
    }
    ++g_running;
    return proc.release();  // exit_cb ends it
}

// Stops the servers that still run and waits until they have exited (their ports free for the next demo),
// at most 20 s; then kills what is left.
void stop_servers(uv_loop_t* loop, const std::vector<uv_process_t*>& children) {
    g_stopping = true;
    auto signal_all = [&](int signum) {
        for (auto* p : children) {
            if (!uv_is_closing(reinterpret_cast<uv_handle_t*>(p))) uv_process_kill(p, signum);
        }
    };
    auto wait_exits = [&](std::chrono::seconds limit) {
        auto deadline = std::chrono::steady_clock::now() + limit;
        while (g_running > 0 && std::chrono::steady_clock::now() < deadline) {
            uv_run(loop, UV_RUN_NOWAIT);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    };
    signal_all(SIGTERM);
    wait_exits(std::chrono::seconds(20));
    if (g_running > 0) {
        std::fprintf(stderr, "glbd demo: %d server(s) did not stop within 20 s: killed\n", g_running);
        signal_all(SIGKILL);
        wait_exits(std::chrono::seconds(5));
    }
}

// Waits (serving the targets) until every server answers every geo from the merged view and is ready (its
// endpoints' first health checks done: /readyz, as `glbd status` shows); false after 60 s (under ThreadSanitizer beside
// other tests: 6-17 s, once over 30 s in CI). The targets are served between any two questions: a question waits up to
// 100 ms, and a target that went unserved for longer than a probe's timeout would fail its probe (on a
// loaded machine, with sanitizers, the servers answer slowly).
bool wait_converged(uv_loop_t* loop) {
    auto converged = [loop] {
        for (const auto& c : kClusters) {
            for (auto [subnet, want] : {std::pair{"10.1.0.0", "127.0.1.11 127.0.1.12"},
                                        std::pair{"10.3.0.0", "127.0.1.21"}, std::pair{"10.2.0.0", "127.0.1.31"}}) {
                uv_run(loop, UV_RUN_NOWAIT);
                if (ask(c.server, "shop.glb.example.test", subnet) != want) return false;
            }
        }
        for (const auto& c : kClusters) {
            std::string body, error;
            uv_run(loop, UV_RUN_NOWAIT);
            if (http_get("http://" + std::string(c.server) + ":9153/readyz", "", 100, body, error) != 200) return false;
        }
        return true;
    };
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
        uv_run(loop, UV_RUN_NOWAIT);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (converged()) return true;
    }
    return false;
}

void print_guide(const std::vector<uv_process_t*>& children, const std::string& secret, const std::string& dir) {
    std::string located;
    if (has_location_db()) {
        located = std::string("\nReal networks are placed by Debian's location database (") + kLocationDb +
                  "):\n\n"
                  "  dig @127.0.0.12 -p 5300 shop.glb.example.test A +subnet=1.1.1.0/24     # AU, Oceania -> oc\n"
                  "  dig @127.0.0.13 -p 5300 shop.glb.example.test A +subnet=193.0.0.0/21   # NL, no EU entry -> us\n";
    }
    std::printf(R"(
glbd demo: three clusters, each with its own glbd, sharing state over DNS with TSIG.

  cluster ie  glbd 127.0.0.11:5300  geo IE          endpoints 127.0.1.11 127.0.1.12   (pid %d)
  cluster us  glbd 127.0.0.12:5300  geo US default  endpoint  127.0.1.21              (pid %d)
  cluster oc  glbd 127.0.0.13:5300  geo GEO-OC      endpoint  127.0.1.31              (pid %d)

Clients are placed by EDNS Client Subnet: 10.1.0.0/16 is IE, 10.3.0.0/16 US, 10.2.0.0/16 GEO-OC. Ask any
server; they all answer from the same choices:

  dig @127.0.0.11 -p 5300 shop.glb.example.test A +subnet=10.1.0.0/16   # IE client -> ie
  dig @127.0.0.12 -p 5300 shop.glb.example.test A +subnet=10.2.0.0/16   # OC client -> oc
  dig @127.0.0.13 -p 5300 shop.glb.example.test A +subnet=10.9.0.0/16   # elsewhere -> us (default geo)
  dig @127.0.0.11 -p 5300 api.glb.example.test A                        # simple host: every cluster
  dig @127.0.0.11 -p 5300 www.glb.example.test A                        # CNAME chased in the zone
  dig @127.0.0.11 -p 5300 glb.example.test NS                           # NS with glue for all three
%s
A failover: stop cluster ie, and within deadAfter (5 s) its IE clients go to the default geo (us), with
a short TTL so that they come back soon after ie does:

  kill %d
  dig @127.0.0.12 -p 5300 shop.glb.example.test A +subnet=10.1.0.0/16

The shared state, readable with the key:

  dig -y hmac-sha256:glb-demo:%s @127.0.0.11 -p 5300 _glbd. AXFR

Configs and logs: %s.
They go when the demo stops: copy a config from there to keep it (each is a whole glbd.yaml, its key
included). Stop with Ctrl-C.
)",
                children[0]->pid, children[1]->pid, children[2]->pid, located.c_str(), children[0]->pid, secret.c_str(),
                dir.c_str());
    std::fflush(stdout);
}

}  // namespace

int run_demo(const std::string& self) {
    uv_loop_t* loop = uv_default_loop();
    Targets targets;  // first: a second demo stops here, before it makes anything
    if (int rc = targets.start(loop); rc != 0) return rc == UV_EADDRINUSE ? 1 : 2;
    std::string dir = private_dir();
    if (dir.empty()) return 2;
    std::random_device rd;
    std::string key;
    for (int i = 0; i < 32; ++i) key.push_back(static_cast<char>(rd() & 0xff));
    std::string secret = wire::base64_encode(key);

    std::vector<uv_process_t*> children;  // each ends itself when its server exits (spawn_server)
    for (const auto& c : kClusters) {
        std::string path = dir + "/" + c.id + ".yaml";
        std::ofstream(path) << config_for(c, secret, dir);
        auto* proc = spawn_server(loop, self, path, dir + "/" + c.id + ".log");
        if (!proc) {
            stop_servers(loop, children);
            std::filesystem::remove_all(dir);
            return 2;
        }
        children.push_back(proc);
    }
    if (!wait_converged(loop)) {
        std::fprintf(stderr, "glbd demo: the three servers did not converge within 60 s; see %s/*.log\n", dir.c_str());
    }
    print_guide(children, secret, dir);

    uv_signal_t sigint, sigterm;
    uv_signal_init(loop, &sigint);
    uv_signal_init(loop, &sigterm);
    auto stop = [](uv_signal_t* s, int) { uv_stop(s->loop); };
    uv_signal_start(&sigint, stop, SIGINT);
    uv_signal_start(&sigterm, stop, SIGTERM);
    uv_run(loop, UV_RUN_DEFAULT);
    stop_servers(loop, children);
    uv_run(loop, UV_RUN_NOWAIT);  // the last closes complete: the handles are freed
    std::filesystem::remove_all(dir);
    std::printf("glbd demo: stopped\n");
    return 0;
}

}  // namespace glbd
