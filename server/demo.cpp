// glbd demo — a self-contained server on loopback from an embedded config, no file needed.
#include <string>

#include "server/daemon.hpp"

namespace glbd {
namespace {

constexpr const char* kDemoConfig = R"(cluster:
  id: demo-1
  instance: demo
listen:
  dns: ["127.0.0.1:5300"]
geoip:
  networks:
    10.1.0.0/16: IE
    10.2.0.0/16: US
zones:
  - origin: glb.example.test
    ttl: 300
    nameservers:
      - name: ns1.glb.example.test
        addresses: [127.0.0.1]
    records: |
      @      300 IN MX    10 mail
      mail   300 IN A     192.0.2.25
      www    300 IN CNAME shop
      info   300 IN TXT   "glbd demo zone"
      *.apps 300 IN A     192.0.2.99
hosts:
  - name: shop.glb.example.test
    ttl: 60
    endpoints: [192.0.2.10, 192.0.2.11, "2001:db8::10"]
    loadBalancing:
      weight: 100
      geo: IE
      defaultGeo: true
  - name: api.glb.example.test
    ttl: 30
    endpoints: [192.0.2.20, lb-1.elb.example.net]
)";

constexpr const char* kBanner = R"(
glbd demo is answering on 127.0.0.1 port 5300 (UDP and TCP). Try:

  dig @127.0.0.1 -p 5300 shop.glb.example.test A            # load-balanced host
  dig @127.0.0.1 -p 5300 shop.glb.example.test A +subnet=10.1.0.0/16
  dig @127.0.0.1 -p 5300 www.glb.example.test A             # CNAME chased in the zone
  dig @127.0.0.1 -p 5300 glb.example.test NS                # NS with glue
  dig @127.0.0.1 -p 5300 x.apps.glb.example.test A          # wildcard
  dig @127.0.0.1 -p 5300 nope.glb.example.test A            # NXDOMAIN with SOA
  dig @127.0.0.1 -p 5300 example.com A                      # REFUSED: not our zone
  dig @127.0.0.1 -p 5300 shop.glb.example.test A +tcp

Stop with Ctrl-C.
)";

}  // namespace

int run_demo() {
    auto r = conf::load_text(kDemoConfig, "<demo>");
    if (!r.config) {
        for (const auto& e : r.errors) fprintf(stderr, "%s\n", e.str().c_str());
        return 1;
    }
    setup_logging("info", "text");
    Daemon daemon(std::move(*r.config), "");
    return daemon.run(kBanner);
}

}  // namespace glbd
