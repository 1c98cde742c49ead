#!/usr/bin/env bash
# Two glbd with one identity (the same cluster.id and cluster.instance, as two hosts with one host name would
# have by default), peers of each other and of a third: each detects the other, logs it loudly with the other's
# address, and shows it in /v1/summary, glbd status and glbd_sync_identity_conflict. Before, the two took turns
# at newer lives and the only trace was an info line about incarnations.
source "$(dirname "$0")/lib.sh"
P=5391
declare -A ADDR=([a]=127.0.29.1 [b]=127.0.29.2 [c]=127.0.29.3) IP=([a]=192.0.2.1 [b]=192.0.2.2 [c]=192.0.2.3)
for n in a b c; do
    id="eu, instance: eu-0"
    [[ $n == c ]] && id="us, instance: us-0"
    cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $id}
listen: {dns: ["${ADDR[$n]}:$P"]}
admin: {listen: "${ADDR[$n]}:9391"}
zones: [{origin: id.test, nameservers: [{name: ns.id.test, addresses: [192.0.2.53]}]}]
hosts:
  - {name: app.id.test, endpoints: [${IP[$n]}]}
$(peers_yaml --interval 500ms --dead 3s "${ADDR[a]}:$P" "${ADDR[b]}:$P" "${ADDR[c]}:$P")
YAML
    start_glbd $n "$WORK/$n.yaml"
done
conflicted() {  # SERVER OTHER: SERVER's summary names OTHER as the conflict
    curl -sf "http://${ADDR[$1]}:9391/v1/summary" | python3 -c 'import json, sys
c = json.load(sys.stdin).get("identityConflict")
sys.exit(0 if c and c["where"].startswith(sys.argv[1]) else 1)' "${ADDR[$2]}"
}
wait_for 20 conflicted a b || fail "a does not see b under its identity: $(curl -s "http://${ADDR[a]}:9391/v1/summary" | head -c 600)"
wait_for 20 conflicted b a || fail "b does not see a under its identity"
grep -Eq "sync: another glbd runs as eu/eu-0 \(${ADDR[b]}(:$P)?; this one listens on ${ADDR[a]}:$P\)" "$WORK/a.log" ||
    fail "a's log does not name both addresses: $(grep 'another glbd' "$WORK/a.log")"
out=$(GLBD_ADMIN_TOKEN= "$GLBD" status --admin "${ADDR[a]}:9391")
[[ $out == *"IDENTITY CONFLICT: another glbd runs as eu/eu-0 (${ADDR[b]}"*"give each its own cluster.instance"* ]] ||
    fail "glbd status: $out"
[[ $(metric glbd_sync_identity_conflict "${ADDR[a]}:9391") == 1 ]] || fail "glbd_sync_identity_conflict is not 1 at a"
[[ $(metric glbd_sync_identity_conflict "${ADDR[c]}:9391") == 0 ]] || fail "c has no conflict, but its gauge says one"
curl -sf "http://${ADDR[c]}:9391/v1/summary" | grep -q identityConflict && fail "c shows a conflict it does not have"
pass "two glbd as eu/eu-0: each names the other (log, /v1/summary, glbd status, gauge); the third has none"
