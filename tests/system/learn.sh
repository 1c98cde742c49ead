#!/usr/bin/env bash
# Members learnt (docs/sync.md): a, b and c name each other; d names a only. d learns b and c from what a
# relays, and a, b and c learn d from its beats: every server answers every cluster's host, and each lists
# the others as peers (d's two it was not told of, and d at a, b and c, as learnt). c also advertises an
# address where nothing listens: d, which reaches c through no configured member, learns it too and tries it
# once, and not again within the minute (a and b reach c as configured: they learn nothing from it). d stops:
# past forgetAfter (8 s here) the others drop it from their peers and forget its origin.
source "$(dirname "$0")/lib.sh"
P=5600 Z=learn.example.com
declare -A ADDR=([a]=127.0.23.100 [b]=127.0.23.101 [c]=127.0.23.102 [d]=127.0.23.103)
NOWHERE=127.0.23.104:$P  # c says it is reached here too; nothing listens
config() {  # NAME MEMBER... -> $WORK/NAME.yaml
    local n=$1; shift
    local members=() m
    for m in "$@"; do members+=("${ADDR[$m]}:$P"); done
    cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["${ADDR[$n]}:$P"]}
admin: {listen: "${ADDR[$n]}:9600"}
zones: [{origin: $Z, nameservers: [{name: ns.$Z, addresses: [${ADDR[a]}]}]}]
hosts:
  - {name: app-$n.$Z, endpoints: [192.0.2.$(( $(printf %d "'$n") - 96 ))]}
$(peers_yaml --interval 500ms --dead 3s "${members[@]}")
  forgetAfter: 8s
$([[ $n == c ]] && echo "  advertise: [\"${ADDR[c]}:$P\", \"$NOWHERE\"]")
YAML
}
config a a b c
config b a b c
config c a b c
config d a
for n in a b c; do start_glbd $n "$WORK/$n.yaml"; done
summary() { curl -s "http://${ADDR[$1]}:9600/v1/summary"; }
# every_answer SERVER: it answers each cluster's host (app-a: 192.0.2.1 ... app-d: 192.0.2.4)
every_answer() {
    local n i=1
    for n in a b c d; do
        [[ $(dig @"${ADDR[$1]}" -p $P +short app-$n.$Z A) == "192.0.2.$i" ]] || return 1
        i=$((i + 1))
    done
}
# peers_of SERVER: "address:learnt:up" of each peer it lists, sorted
peers_of() {
    summary "$1" | python3 -c '
import json, sys
print(" ".join(sorted("%s:%s:%s" % (p["address"], "learnt" if p.get("learnt") else "configured",
                                   "up" if p["alive"] else "down") for p in json.load(sys.stdin)["peers"])))'
}
wait_for 20 bash -c "[[ \$(dig @${ADDR[a]} -p $P +short app-c.$Z A) == 192.0.2.3 ]]" || fail "a, b and c never synced"

start=$(now_ms)
start_glbd d "$WORK/d.yaml"
for n in a b c d; do
    wait_for 30 every_answer $n || fail "$n does not answer every cluster's host: $(peers_of $n)"
done
joined=$(( $(now_ms) - start ))
want_peers() {  # SERVER EXPECTED
    [[ $(peers_of "$1") == "$2" ]]
}
u() { echo "${ADDR[$1]}:$P:$2:up"; }
wait_for 20 want_peers d "$(u a configured) $(u b learnt) $(u c learnt) $NOWHERE:learnt:down" ||
    fail "d's peers: $(peers_of d)"
for n in a b c; do
    want=()
    for m in a b c; do [[ $m != "$n" ]] && want+=("$(u $m configured)"); done
    want+=("$(u d learnt)")
    wait_for 20 want_peers $n "${want[*]}" || fail "$n's peers: $(peers_of $n), want ${want[*]}"
done
pass "d joined naming a only: every server answers all four clusters' hosts ${joined} ms after d started, and lists the others (d learnt, b and c learnt by d)"

# The address nobody answers at: one try, none again within the minute however often it is claimed (each
# round claims it again from c's report).
sleep 5
tries=$(summary d | python3 -c "
import json, sys
print([p['exchanges'] for p in json.load(sys.stdin)['peers'] if p['address'] == '$NOWHERE'][0])")
[[ $tries == 1 ]] || fail "d tried $NOWHERE $tries times, want 1"
metric=$(curl -s "http://${ADDR[d]}:9600/metrics" | grep '^glbd_sync_learnt_members ')
[[ $metric == "glbd_sync_learnt_members 3" ]] || fail "d's metric: $metric"
pass "an advertised address that never answers: tried once by d in the minute; glbd_sync_learnt_members 3"

stop_glbd d
gone() {  # SERVER: d is neither a peer nor a known cluster
    local s
    s=$(summary "$1")
    [[ $s != *"${ADDR[d]}"* && $s != *'"id":"d"'* ]]
}
for n in a b c; do
    wait_for 30 gone $n || fail "$n still holds d after forgetAfter: $(peers_of $n)"
    every_answer $n && fail "$n still answers d's host"
done
[[ $(dig @"${ADDR[a]}" -p $P +short app-c.$Z A) == 192.0.2.3 ]] || fail "a lost c"
pass "d stopped: past forgetAfter a, b and c dropped it from their peers and forgot its origin"
