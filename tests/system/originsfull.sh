#!/usr/bin/env bash
# Known origins are bounded (1,024, glbd's own included), and the dead ones no longer hold their places until
# forgetAfter (24 h): two peers that hold the key fill the table with 1,023 origins and go away; once they
# are dead (deadAfter 2s), a new cluster from another peer is taken in the place of the one dead longest,
# and served. (On the old code it was refused: "1024 instances known already".)
source "$(dirname "$0")/lib.sh"
A=127.0.21.1 FILL1=127.0.21.2 FILL2=127.0.21.4 LATE=127.0.21.3 P=5431 ADMIN=127.0.21.1:9431
cat > "$WORK/a.yaml" <<YAML
cluster: {id: a, instance: a-0}
listen: {dns: ["$A:$P"]}
admin: {listen: "$ADMIN"}
zones: [{origin: full.test, nameservers: [{name: ns.full.test, addresses: [$A]}]}]
hosts:
  - {name: app.full.test, endpoints: [192.0.2.1], loadBalancing: {weight: 1, geo: IE}}
$(peers_yaml --interval 300ms --dead 2s "$FILL1:$P" "$FILL2:$P" "$LATE:$P")
YAML
now=$(( $(date +%s) * 1000 ))
# Two peers of 512 and 511 origins without hosts (one transfer message each, under 64 KiB).
fill_zone() {  # NAME FIRST LAST
    echo "_glbd. 0 IN TXT \"glbd-sync=1\" \"from=$1/f-0\""
    for i in $(seq "$2" "$3"); do
        echo "o$i._glbd. 0 IN TXT \"origin=f$i/f-0\" \"inc=1\" \"version=$now\" \"heartbeat=$now\" \"age=0\""
    done
}
fill_zone fill1 1 512 > "$WORK/fill1.zone"
fill_zone fill2 513 1023 > "$WORK/fill2.zone"
cat > "$WORK/late.zone" <<ZONE
_glbd. 0 IN TXT "glbd-sync=1" "from=late/l-0"
o1._glbd. 0 IN TXT "origin=late/l-0" "inc=1" "version=$now" "heartbeat=$now" "age=0"
h1.o1._glbd. 0 IN TXT "host=late.full.test" "ttl=60" "ep=203.0.113.7 up"
ZONE
known() { curl -s "http://$ADMIN/v1/state" | python3 -c 'import json,sys; print(sum(len(c["instances"]) for c in json.load(sys.stdin)["clusters"]))'; }
# The filling peers answer 3 pulls each, then are gone.
for f in 1 2; do
    addr=FILL$f
    "$DNSCLIENT" peer ${!addr} $P 3 glb-sync. "$TSIG_SECRET" "$WORK/fill$f.zone" > "$WORK/fill$f.out" 2>&1 &
    PIDS+=($!)
done
start_glbd a "$WORK/a.yaml"
wait_for 30 bash -c "(( \$(curl -s http://$ADMIN/v1/state | python3 -c 'import json,sys; print(sum(len(c[\"instances\"]) for c in json.load(sys.stdin)[\"clusters\"]))') >= 1024 ))" ||
    fail "the table did not fill: $(known) origins known"
full=$(known)
# The new cluster arrives once the others are dead.
sleep 2.5
"$DNSCLIENT" peer $LATE $P 1000 glb-sync. "$TSIG_SECRET" "$WORK/late.zone" > "$WORK/late.out" 2>&1 &
PIDS+=($!)
wait_for 30 bash -c "[[ \$(dig @$A -p $P +short late.full.test A) == 203.0.113.7 ]]" ||
    fail "the new cluster was not taken: $(grep -m1 'not taking\|forgot' "$WORK/a.log")"
grep -q "sync: forgot f[0-9]*/f-0 (dead) to make room for late/l-0" "$WORK/a.log" || fail "the eviction was not logged"
(( $(known) <= 1024 )) || fail "more than 1,024 origins known: $(known)"
[[ $(dig @$A -p $P +short app.full.test A) == 192.0.2.1 ]] || fail "our own host is gone"
pass "$full origins known (the table full); 2 s after they died a new cluster took the place of one dead longest, and its host is served"
