#!/usr/bin/env bash
# glbd forget: a dead instance forgotten on every server at once. Three clusters (a, b, c) and a fourth
# instance (d, ap/ap-old) that runs for seconds and dies. `glbd forget ap/ap-old` at a takes it out of b's and
# c's view, status, peers (it was a learnt member) and metrics within a few sync rounds; a restarted b (its
# stateDir) does not bring it back; d started again (a new life) comes back everywhere. Refused with the
# reason: this instance, one alive, one not known. Before, it stayed everywhere for peers.forgetAfter (24 h).
source "$(dirname "$0")/lib.sh"
P=5397
declare -A ADDR=([a]=127.0.31.1 [b]=127.0.31.2 [c]=127.0.31.3 [d]=127.0.31.4)
declare -A ID=([a]="eu, instance: eu-0" [b]="us, instance: us-0" [c]="ap, instance: ap-0" [d]="ap, instance: ap-old")
declare -A IP=([a]=192.0.2.1 [b]=192.0.2.2 [c]=192.0.2.3 [d]=192.0.2.3)  # c and d: two replicas of ap
for n in a b c d; do
    cat > "$WORK/$n.yaml" <<YAML
cluster: {id: ${ID[$n]}}
listen: {dns: ["${ADDR[$n]}:$P"]}
admin: {listen: "${ADDR[$n]}:9397"}
stateDir: $WORK/state-$n
zones: [{origin: fg.test, nameservers: [{name: ns.fg.test, addresses: [192.0.2.53]}]}]
hosts:
  - {name: app.fg.test, endpoints: [${IP[$n]}]}
$(peers_yaml --interval 500ms --dead 3s "${ADDR[a]}:$P" "${ADDR[b]}:$P" "${ADDR[c]}:$P")
YAML
done
for n in a b c d; do start_glbd $n "$WORK/$n.yaml"; done
admin() { echo "${ADDR[$1]}:9397"; }
knows() {  # SERVER: SERVER's metrics have ap/ap-old (glbd_sync_last_heard_seconds) and a peer at d's address
    curl -sf "http://$(admin "$1")/metrics" | grep -q '^glbd_sync_last_heard_seconds{origin="ap/ap-old"}' &&
        curl -sf "http://$(admin "$1")/v1/summary" | grep -q "\"${ADDR[d]}:$P\""
}
forgot() {  # SERVER: nothing of ap/ap-old in SERVER's metrics, /v1/state (instances, peers) or glbd status
    ! curl -sf "http://$(admin "$1")/metrics" | grep -q 'ap/ap-old' &&
        ! curl -sf "http://$(admin "$1")/v1/state" | grep -q -e 'ap-old' -e "${ADDR[d]}:" &&
        ! GLBD_ADMIN_TOKEN= "$GLBD" status --admin "$(admin "$1")" | grep -q -e 'ap-old' -e "${ADDR[d]}:"
}
for n in a b c; do wait_for 30 knows $n || fail "$n does not know ap/ap-old: $(curl -s "http://$(admin $n)/v1/summary" | head -c 800)"; done
pass "every server knows ap/ap-old, a learnt member"

# Refused, with the reason: alive, this instance, unknown, not CLUSTER/INSTANCE.
out=$(GLBD_ADMIN_TOKEN= "$GLBD" forget ap/ap-old --admin "$(admin a)" 2>&1) && fail "forgetting a live instance was taken"
[[ $out == *'HTTP 409: refused: "ap/ap-old" is alive (heard '*' s ago): stop it first'* ]] || fail "alive: $out"
out=$(GLBD_ADMIN_TOKEN= "$GLBD" forget eu/eu-0 --admin "$(admin a)" 2>&1) && fail "forgetting itself was taken"
[[ $out == *'refused: "eu/eu-0" is this instance'* ]] || fail "itself: $out"
out=$(GLBD_ADMIN_TOKEN= "$GLBD" forget eu/nobody --admin "$(admin a)" 2>&1) && fail "forgetting an unknown instance was taken"
[[ $out == *'refused: no instance "eu/nobody" is known'* ]] || fail "unknown: $out"
rc=0; out=$("$GLBD" forget ap-old 2>&1) || rc=$?
(( rc == 1 )) && [[ $out == *'give CLUSTER/INSTANCE'* ]] || fail "a name without a cluster: exit $rc: $out"
[[ $(curl -s -o /dev/null -w '%{http_code}' -X POST -d '{"instance": 7}' "http://$(admin a)/v1/forget") == 400 ]] || fail "a bad body: want 400"
pass "forget refused with the reason: alive, this instance, unknown, malformed"

stop_glbd d
dead_at_a() { curl -sf "http://$(admin a)/v1/state" | python3 -c 'import json, sys
s = json.load(sys.stdin)
ap = [i for c in s["clusters"] for i in c.get("instances", []) if i.get("id", i.get("instance")) in ("ap/ap-old", "ap-old")]
sys.exit(0 if ap and not ap[0]["alive"] else 1)'; }
wait_for 30 dead_at_a || fail "a does not see ap/ap-old dead: $(curl -s "http://$(admin a)/v1/state" | head -c 1200)"
t=$(now_ms)
out=$(GLBD_ADMIN_TOKEN= "$GLBD" forget ap/ap-old --admin "$(admin a)") || fail "glbd forget: $out"
[[ $out == "forgot ap/ap-old: every peer forgets it"* ]] || fail "glbd forget said: $out"
for n in a b c; do wait_for 20 forgot $n || fail "$n still has ap/ap-old: $(curl -s "http://$(admin $n)/metrics" | grep ap-old; curl -s "http://$(admin $n)/v1/state" | head -c 1500)"; done
ms=$(( $(now_ms) - t ))
grep -q 'sync: ap/ap-old forgotten through the admin API' "$WORK/a.log" || fail "a does not log the forget"
grep -q 'sync: forgot ap/ap-old: forgotten fleet-wide' "$WORK/b.log" || fail "b does not log the forget"
[[ $(dig @"${ADDR[b]}" -p $P +short app.fg.test A | sort | tr '\n' ' ') == "192.0.2.1 192.0.2.2 192.0.2.3 " ]] || fail "b's answer after the forget"
pass "glbd forget ap/ap-old at a: gone from every server's metrics, state, peers and status within $ms ms"

stop_glbd b
start_glbd b "$WORK/b.yaml"
wait_for 20 curl -sf "http://$(admin b)/readyz" || fail "b is not ready after its restart"
wait_for 20 grep -q '"us/us-0"' <(curl -sf "http://$(admin a)/v1/state") || fail "a lost b"
sleep 2  # two sync rounds with every peer: a stale copy would be back by now
forgot b || fail "b's restart brought ap/ap-old back: $(curl -s "http://$(admin b)/v1/state" | head -c 1500)"
pass "a restart of b (stateDir) does not bring ap/ap-old back"

start_glbd d "$WORK/d.yaml"
for n in a b c; do wait_for 30 knows $n || fail "$n does not take ap/ap-old's new life"; done
pass "ap/ap-old started again (a new life): known everywhere again"
