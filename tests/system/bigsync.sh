#!/usr/bin/env bash
# A transfer bigger than the old 16 MiB cap on what one peer may send, to a node that starts empty, with a
# change made at the source while that transfer is in flight.
#   a (127.0.0.243) holds 17 clusters: its own (one host) and 16 from stateDir, 10,000 hosts each with an
#     IPv4 and two IPv6 endpoints (about 20 MB of transfer). c01 is the only US entry and the default geo; c02..c15 are DE; c16 is
#     the only JP entry.
#   b (127.0.0.244) starts with nothing but a as its peer.
# Checks: b learns every cluster (answers for the last host from the last cluster, and every cluster's
# entry in its metrics) with nothing cut off; the size of the transfer as a read it; and an override of c16
# made at a while b reads (after a served b's request) reaches b, so the change is not lost to the transfer
# in progress: b then answers Japan from the default geo.
source "$(dirname "$0")/lib.sh"
A=127.0.0.243 B=127.0.0.244 P=5443 AA=127.0.0.243:9443 BA=127.0.0.244:9444
mkdir -p "$WORK/state"
python3 - "$WORK/state/state.json" <<'PY'
import json, sys, time
now = int(time.time() * 1000)
with open(sys.argv[1], "w") as f:
    f.write('{"saved": %d, "origins": [' % now)
    for c in range(1, 17):
        geo, default = ("JP", False) if c == 16 else ("US", True) if c == 1 else ("DE", False)
        hosts = [{"host": f"h{h}.big.test", "ttl": 60, "loadBalancing": {"weight": 100, "geo": geo, "defaultGeo": default},
                  "endpoints": [{"target": f"10.{c}.{h // 250}.{h % 250 + 1}", "healthy": True},
                                {"target": f"2001:db8:{c:x}::{h + 1:x}", "healthy": True},
                                {"target": f"2001:db8:{c:x}:1::{h + 1:x}", "healthy": True}]} for h in range(10000)]
        f.write(("," if c > 1 else "") + json.dumps({"cluster": f"c{c:02d}", "instance": "i", "version": now, "heartbeat": now,
                                                     "overrides": {}, "hosts": hosts}))
    f.write("]}")
PY
config() {  # NAME ADDR ADMIN PEER [stateDir]
    cat > "$WORK/$1.yaml" <<YAML
cluster: {id: $1, instance: i}
listen: {dns: ["$2:$P"]}
admin: {listen: "$3"}
log: {level: info}
rateLimit: {responsesPerSecond: 0}
geoip: {database: $FIXTURES/test.mmdb}
zones: [{origin: big.test, nameservers: [{name: ns.big.test, addresses: [$A]}]}]
hosts: [{name: own.big.test, endpoints: [192.0.2.1]}]
$(peers_yaml --key big --interval 1s --dead 1h "$4:$P")
${5:+stateDir: $5}
YAML
}
config a $A $AA $B "$WORK/state"
config b $B $BA $A
start_glbd a "$WORK/a.yaml"
jp() { answers "$1" $P h9999.big.test A +subnet=10.5.0.0/16; }
wait_for 120 bash -c "[[ \$(dig @$A -p $P +short +norec h9999.big.test A +subnet=10.5.0.0/16) == 10.16.39.250 ]]" ||
    fail "a does not serve its stateDir view"
served0=$(curl -s "http://$AA/metrics" | awk '/^glbd_sync_served_total /{print $2}')

t0=$(now_ms)
start_glbd b "$WORK/b.yaml"
# As soon as a has served b a transfer of everything, drain c16 at a: b is reading that transfer now.
wait_for 60 bash -c "(( \$(curl -s http://$AA/metrics | awk '/^glbd_sync_served_total /{print \$2}') > $served0 ))" ||
    fail "b never asked a for its state"
curl -sf -X PUT -d '{"target":"c16","state":"down"}' "http://$AA/v1/overrides" >/dev/null || fail "override refused"
t_change=$(now_ms)

# b knows every cluster: all 18 origins (a, b and a's 16) in its metrics, each host answered.
knows_all() {
    [[ $(curl -s "http://$BA/metrics" | grep -c '^glbd_sync_last_heard_seconds{') == 18 ]] &&
        [[ $(dig @$B -p $P +short +norec h9999.big.test A +subnet=10.3.0.0/16) == 10.1.39.250 ]]
}
wait_for 120 knows_all || fail "b did not learn the view: $(curl -s "http://$BA/metrics" | grep -c '^glbd_sync_last_heard_seconds{') origins"
learnt=$(( $(now_ms) - t0 ))
de=$(dig @$B -p $P +short +norec h9999.big.test A +subnet=10.4.0.0/24)
[[ $de =~ ^10\.([2-9]|1[0-5])\.39\.250$ ]] || fail "b: a DE client got '$de', not one of c02..c15"

# The change made during the transfer: Japan's only entry (c16) is drained, so the default geo (c01) answers.
wait_for 60 bash -c "[[ \$(dig @$B -p $P +short +norec h9999.big.test A +subnet=10.5.0.0/16) == 10.1.39.250 ]]" ||
    fail "the override made during the transfer did not reach b: Japan gets $(jp $B)"
after_change=$(( $(now_ms) - t_change ))
# Nothing was cut off, and the transfer was larger than the old cap.
metrics=$(curl -s "http://$BA/metrics")
[[ $(awk '/^glbd_sync_oversized_total /{print $2}' <<<"$metrics") == 0 ]] || fail "b cut a transfer off"
grep -E "cut off|oversized|malformed" "$WORK/b.log" && fail "b logged a cut transfer"
bytes=$(dig -y hmac-sha256:big:$TSIG_SECRET @$A -p $P _glbd. AXFR +time=30 +tries=1 | sed -n 's/.*XFR size: [0-9]* records (messages \([0-9]*\), bytes \([0-9]*\)).*/\2 \1/p')
(( ${bytes% *} > 16 * 1024 * 1024 )) || fail "the transfer is only ${bytes% *} bytes: not above the old 16 MiB cap"
# A few hosts from across the view, each from its cluster.
for h in 0 4321 9999; do
    [[ $(dig @$B -p $P +short +norec h$h.big.test A +subnet=10.3.0.0/16) == 10.1.$((h / 250)).$((h % 250 + 1)) ]] || fail "b: h$h"
done
pass "b learnt 16 x 10,000 hosts from a in $learnt ms over one transfer of ${bytes% *} bytes in ${bytes#* } messages (old cap 16 MiB); nothing cut off"
pass "an override made at a while b read the transfer reached b $after_change ms after it was made"
