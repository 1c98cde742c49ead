#!/usr/bin/env bash
# A fresh node learns each origin once, not once from every peer that holds it. a, b and c know each
# other; d starts with all of them as members. Its first round pulls one member with everything it relays
# (three origins' data) and, with what that brought, asks the others for their own origin alone: three
# reports with data in all. Pulling all three at once for everything brought nine (each peer sent all
# three), which at 20 peers was 7.8 times the data a start needs (bench/sync-converge.sh).
source "$(dirname "$0")/lib.sh"
P=5546
declare -A ADDR=([a]=127.0.0.248 [b]=127.0.0.249 [c]=127.0.0.250 [d]=127.0.0.251)
declare -A EP=([a]=192.0.2.1 [b]=192.0.2.2 [c]=192.0.2.3 [d]=192.0.2.4)
ADMIN=127.0.0.251:9546
config() {
    # syncInterval 60s: the first round and NOTIFYs only; what d learns, its first round brought.
    cat > "$WORK/$1.yaml" <<YAML
cluster: {id: $1, instance: $1-0}
listen: {dns: ["${ADDR[$1]}:$P"]}
$([[ $1 == d ]] && echo "admin: {listen: \"$ADMIN\"}")
zones: [{origin: once.test, nameservers: [{name: ns.once.test, addresses: [${ADDR[a]}]}]}]
hosts:
  - {name: $1.once.test, endpoints: [${EP[$1]}]}
$(peers_yaml --interval 60s --dead 120s "${ADDR[a]}:$P" "${ADDR[b]}:$P" "${ADDR[c]}:$P" "${ADDR[d]}:$P")
YAML
}
sees() { [[ $(dig @${ADDR[$1]} -p $P +short $2.once.test A) == "$3" ]]; }
for n in a b c d; do config $n; done
for n in a b c; do
    start_glbd $n "$WORK/$n.yaml"
    wait_for 20 sees $n $n ${EP[$n]} || fail "$n does not answer"
done
for n in a b c; do
    wait_for 20 bash -c "[[ \$(dig @${ADDR[$n]} -p $P +short a.once.test b.once.test c.once.test A | sort | tr '\n' ' ') == '192.0.2.1 192.0.2.2 192.0.2.3 ' ]]" ||
        fail "$n does not know a, b and c"
done
start_glbd d "$WORK/d.yaml"
for n in a b c; do
    wait_for 20 sees d $n ${EP[$n]} || fail "d did not learn $n"
done
sleep 0.5  # every pull of d's first round has ended
reports=$(curl -sf "http://$ADMIN/metrics" | awk '/^glbd_sync_reports_received_total / {print $2}')
[[ $reports == 3 ]] || fail "d received $reports reports with data for three origins (each once would be 3)"
pass "d learnt a, b and c from $reports reports with data: each origin once"
