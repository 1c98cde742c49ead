#!/usr/bin/env python3
"""A global view of HOSTS hosts x CLUSTERS clusters for one glbd, as bench/scale.sh and tests/system/page10k.sh
use it: DIR/glbd.yaml (cluster c00, geo US, the default geo, every host in the file) and DIR/state/state.json
(the other clusters, as glbd writes them: format 2, hosts as rows by name), as after a restart; and
DIR/queries.txt, 1000 names spread over the view for dnsperf.
   scale-view.py DIR HOSTS CLUSTERS ADDR PORT ADMIN MMDB [--config-order]
--config-order writes each cluster's hosts in the config's order (h0, h1, ... h10) instead of by name, as an
older glbd or a hand-written file may: bench/memory-guard.sh's view (a report out of order cost 55 MB at
d493dfd).
"""
import json, sys, time
config_order = "--config-order" in sys.argv
args = [a for a in sys.argv[1:] if a != "--config-order"]
d, hosts, clusters, addr, port, admin, mmdb = args[0], int(args[1]), int(args[2]), *args[3:7]
geos = ["US", "IE", "GEO-OC", "DE", "JP", "GEO-EU", "BR", "AU", "FR", "GEO-AS"]
# Every view answers the measured queries the same way: IE (the ecs workload) holds two clusters, so
# each answer is a weighted draw, and the default group (the src workload) one. A view of fewer
# clusters than geos puts all but the first in IE.
def geo(c):
    return geos[c % len(geos)] if clusters > len(geos) else "IE"
now = int(time.time() * 1000)
def endpoints(c, h):
    return [f"10.{c}.{h // 250}.{h % 250 + 1}", f"2001:db8:{c:x}::{h + 1:x}"]
with open(f"{d}/glbd.yaml", "w") as f:
    f.write(f"cluster: {{id: c00, instance: bench}}\nlisten: {{dns: [\"{addr}:{port}\"]}}\nthreads: 1\n"
            f"log: {{level: warn}}\nrateLimit: {{responsesPerSecond: 0}}\nadmin: {{listen: \"{admin}\"}}\ngeoip: {{database: {mmdb}}}\n"
            f"zones:\n  - origin: glb.example.test\n    nameservers: [{{name: ns1.glb.example.test, addresses: [192.0.2.53]}}]\n"
            f"peers:\n  key: {{name: bench, secret: \"YmVuY2hiZW5jaGJlbmNoYmVuY2hiZW5jaGJlbmNoYmVuY2g=\"}}\n"
            f"  members: []\n  deadAfter: 1h\nstateDir: {d}/state\nhosts:\n")
    for h in range(hosts):
        f.write(f"  - {{name: h{h}.glb.example.test, ttl: 60, endpoints: {json.dumps(endpoints(0, h))}, "
                f"loadBalancing: {{weight: 100, geo: US, defaultGeo: true}}}}\n")
origins = []  # as glbd writes them (format 2: hosts as rows, by name)
by_name = range(hosts) if config_order else sorted(range(hosts), key=lambda h: f"h{h}.glb.example.test")
for c in range(1, clusters):
    origins.append({"cluster": f"c{c:02d}", "instance": "bench", "version": now, "heartbeat": now, "overrides": {},
                    "hostCount": hosts, "hosts": [[f"h{h}.glb.example.test", 60, [[t, True] for t in endpoints(c, h)], [100 + c, geo(c), False]]
                              for h in by_name]})
with open(f"{d}/state/state.json", "w") as f:
    json.dump({"format": 2, "saved": now, "origins": origins}, f, separators=(",", ":"))
with open(f"{d}/queries.txt", "w") as f:
    step = max(1, hosts // 1000)  # 1000 names spread over the view
    for h in range(0, hosts, step):
        f.write(f"h{h}.glb.example.test A\n")
