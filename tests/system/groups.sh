#!/usr/bin/env bash
# Failover groups as dns-operator (>= 0.16) has them, served by two glbd clusters: ie's records carry
# status.group "east" (as dns-operator --group=east writes it), us sets kubernetes.group "west". No groups record
# and no set: every group is active, both answer. `glbd groups` on one server switches the active set; both
# servers answer from the active group and serve the TXT kuadrant-active-groups.<zone>, read here the way
# dns-operator reads it; a switch back the other way from the other server. Then the groups record: a labelled
# DNSRecord holding that TXT (a CoreDNS user's set-up) waits while the admin's set holds, takes over at
# `glbd groups clear`, is served as written, and its deletion leaves every group active; one from a namespace
# not in kubernetes.groupsFrom, or at a name that only starts like it, switches nothing. Skipped where kubectl
# is missing.
source "$(dirname "$0")/lib.sh"
command -v kubectl >/dev/null || { echo "SKIP: kubectl is not installed"; exit 77; }
TOOLS="$(dirname "$0")/../tools"
P=5590 Z=groups.example.com
declare -A ADDR=([ie]=127.0.23.90 [us]=127.0.23.91) API=([ie]=127.0.23.92 [us]=127.0.23.93)
declare -A GEO=([ie]=IE [us]=US) GW=([ie]=172.18.1.10 [us]=172.18.2.10) GROUP=([ie]="" [us]=west)
for c in ie us; do
    start_fakekube $c "${API[$c]}" 6590
    kube_cluster_yaml $c $P 9590 $Z "resync: 1s, group: \"${GROUP[$c]}\", groupsFrom: [gateways]" "" ie us > "$WORK/$c.yaml"
done
record() { lb_record "$1" "${GEO[$1]}" "${GW[$1]}" "$Z"; }  # CLUSTER
kc() { local c=$1; shift; KUBECONFIG=$WORK/$c/kubeconfig kubectl "$@"; }
for c in ie us; do
    start_glbd $c "$WORK/$c.yaml"
    record $c | kc $c apply --validate=false -f - >/dev/null || fail "apply in $c"
done
# dns-operator's own status write: its --group on every record it reconciles.
kc ie -n gateways patch dnsrecord shop --subresource=status --type=merge -p '{"status":{"group":"east"}}' >/dev/null ||
    fail "kubectl patch --subresource=status"

from() { dig @"${ADDR[$1]}" -p $P +short shop.$Z A +subnet="$2"; }
agree() {  # IE_ANSWER US_ANSWER: both servers give IE clients (10.1/16) and US clients (10.3/16) these
    local s
    for s in ie us; do
        [[ $(from $s 10.1.0.0/16) == "$1" && $(from $s 10.3.0.0/16) == "$2" ]] || return 1
    done
}
groups_of() { curl -s "http://${ADDR[$1]}:9590/v1/groups"; }
cluster_group() {  # SERVER CLUSTER: that cluster's group as the server knows it
    groups_of "$1" | python3 -c "import json,sys; print([c['group'] for c in json.load(sys.stdin)['clusters'] if c['id'] == '$2'][0])"
}
wait_for 20 bash -c "[[ \$(curl -s http://${ADDR[us]}:9590/v1/groups) == *'\"group\":\"east\"'* ]]" ||
    fail "us never learnt ie's group from its record's status: $(groups_of us)"
for s in ie us; do
    [[ $(cluster_group $s ie) == east && $(cluster_group $s us) == west ]] || fail "$s: groups $(groups_of $s)"
done
wait_for 20 agree "${GW[ie]}" "${GW[us]}" || fail "no set: every group active expected, got $(from ie 10.1.0.0/16)/$(from ie 10.3.0.0/16)"
[[ $(dig @"${ADDR[ie]}" -p $P +short kuadrant-active-groups.$Z TXT) == "" ]] || fail "a TXT before any set"
[[ $(groups_of ie) == *'"active":null'* && $(groups_of ie) == *'"standby":false'* && $(groups_of ie) != *'"standby":true'* ]] ||
    fail "no set: $(groups_of ie)"
pass "groups from status.group (ie: east) and kubernetes.group (us: west); no groups record, no set: every group active, both answer"

# The TXT read as dns-operator's getActiveGroups reads it: strings joined, ';' pairs, "groups" split on "&&".
active_as_dns_operator() {
    dig @"$1" -p $P +short kuadrant-active-groups.$Z TXT | python3 -c '
import sys
txt = "".join(part for line in sys.stdin for part in line.strip().split("\"") if part.strip())
groups = []
for pair in txt.split(";"):
    kv = pair.split("=")
    if len(kv) == 2 and kv[0] == "groups":
        groups += [g for g in kv[1].split("&&") if g and g not in groups]
print(",".join(groups))'
}
switch_to() {  # WHERE GROUP IE_ANSWER US_ANSWER: groups set GROUP on WHERE; the time until both servers agree
    local t0
    t0=$(now_ms)
    "$GLBD" groups set "$2" --admin "${ADDR[$1]}:9590" > "$WORK/groups.out" || fail "glbd groups set $2: $(cat "$WORK/groups.out")"
    wait_for 20 agree "$3" "$4" || fail "after set $2 on $1: $(from ie 10.1.0.0/16)/$(from ie 10.3.0.0/16) and $(from us 10.1.0.0/16)/$(from us 10.3.0.0/16)"
    echo $(( $(now_ms) - t0 ))
}
ms=$(switch_to ie west "${GW[us]}" "${GW[us]}")
for s in ie us; do
    [[ $(active_as_dns_operator "${ADDR[$s]}") == west ]] || fail "$s: TXT $(dig @"${ADDR[$s]}" -p $P +short kuadrant-active-groups.$Z TXT)"
done
[[ $(dig @"${ADDR[us]}" -p $P +short kuadrant-active-groups.$Z TXT) == '"version=1;groups=west"' ]] || fail "TXT text"
cat "$WORK/groups.out"
grep -Eq "^ +ie +east +standing by" "$WORK/groups.out" && grep -Eq "^ +us +west +active" "$WORK/groups.out" ||
    fail "glbd groups: $(cat "$WORK/groups.out")"
pass "glbd groups set west on ie: both servers answer us's gateway to IE and US clients within $ms ms; TXT groups=west on both"
"$GLBD" explain shop.$Z --subnet 10.1.0.0/16 --admin "${ADDR[us]}:9590" > "$WORK/explain.out" || fail "glbd explain"
grep -Eq "^ +ie .* IE +100 +no \(group standing by\)" "$WORK/explain.out" || fail "explain: $(cat "$WORK/explain.out")"
pass "glbd explain says why ie's healthy entry is not answered: its group stands by"
curl -s "http://${ADDR[us]}:9590/metrics" > "$WORK/metrics"
python3 "$TOOLS/promcheck.py" "$WORK/metrics" >/dev/null || fail "metrics format: $(python3 "$TOOLS/promcheck.py" "$WORK/metrics")"
grep -qx 'glbd_cluster_standby{cluster="ie",group="east"} 1' "$WORK/metrics" &&
    grep -qx 'glbd_cluster_standby{cluster="us",group="west"} 0' "$WORK/metrics" &&
    grep -qx 'glbd_active_group{group="west"} 1' "$WORK/metrics" || fail "metrics: $(grep group "$WORK/metrics")"
pass "metrics: glbd_cluster_standby per grouped cluster, glbd_active_group per active group"
ms=$(switch_to us east "${GW[ie]}" "${GW[ie]}")
[[ $(active_as_dns_operator "${ADDR[ie]}") == east ]] || fail "ie: TXT after the switch back"
pass "glbd groups set east on us: both servers answer ie's gateway within $ms ms"
"$GLBD" groups add west --admin "${ADDR[ie]}:9590" >/dev/null || fail "glbd groups add"
wait_for 20 agree "${GW[ie]}" "${GW[us]}" || fail "both groups active: each client its own cluster"
[[ $(active_as_dns_operator "${ADDR[us]}") == east,west ]] || fail "us: TXT after add"
pass "glbd groups add west: both active, each client its own cluster"
out=$("$GLBD" groups add wset --admin "${ADDR[ie]}:9590" 2>&1) && fail "a group no cluster is in was taken: $out"
[[ $out == *'HTTP 409: refused: no cluster is in the group "wset"'* ]] || fail "no reason for a group no cluster is in: $out"
out=$("$GLBD" groups set east wset --admin "${ADDR[ie]}:9590" 2>&1) && fail "a set naming a group no cluster is in was taken: $out"
[[ $("$GLBD" groups --admin "${ADDR[ie]}:9590") != *wset* ]] || fail "a refused group is active"
out=$("$GLBD" groups add wset --force --admin "${ADDR[ie]}:9590") || fail "glbd groups add wset --force: $out"
[[ $out == *'warning: no cluster is in the active group "wset"'* ]] || fail "no warning for a group no cluster is in: $out"
grep -q 'no cluster is in the active group "wset"' "$WORK/ie.log" || fail "the unmatched group is not logged"
out=$("$GLBD" groups remove wset --admin "${ADDR[ie]}:9590") || fail "glbd groups remove wset: $out"
[[ $out != *warning* ]] || fail "a warning with every group matched: $out"
pass "a group that no cluster is in is refused with the reason (409), and taken with --force and warned of"
out=$("$GLBD" groups set "bad;name" --admin "${ADDR[ie]}:9590" 2>&1) && fail "a bad group name was taken"
[[ $out == *"not a group name"* ]] || fail "bad name: $out"
pass "a bad group name is refused with the reason ($out)"

# A user's labelled DNSRecord holding the TXT, as a CoreDNS set-up has it, from a namespace of groupsFrom. The
# admin's set (east and west since `add`) holds whatever it says, until `glbd groups clear`.
groups_record() {  # NAMESPACE NAME TEXT
    cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: $2, namespace: $1, labels: {kuadrant.io/coredns-zone-name: $Z}}
spec:
  rootHost: $Z
  endpoints:
    - {dnsName: kuadrant-active-groups.$Z, recordType: TXT, targets: ['$3']}
REC
}
groups_record gateways active-groups 'groups=west;version=1' | kc us apply --validate=false -f - >/dev/null ||
    fail "apply the groups record"
wait_for 20 bash -c "[[ \$(curl -s http://${ADDR[ie]}:9590/v1/groups) == *'groups=west;version=1'* ]]" ||
    fail "ie never saw us's groups record: $(groups_of ie); us: $(groups_of us)"
agree "${GW[ie]}" "${GW[us]}" || fail "the record overrode the admin's set: $(from ie 10.1.0.0/16)/$(from ie 10.3.0.0/16)"
[[ $(active_as_dns_operator "${ADDR[ie]}") == east,west ]] || fail "ie: TXT while the admin's set holds"
pass "a groups record (groups=west) while the admin's set (east, west) holds: nothing switches"
t0=$(now_ms)
"$GLBD" groups clear --admin "${ADDR[ie]}:9590" > "$WORK/groups.out" || fail "glbd groups clear: $(cat "$WORK/groups.out")"
wait_for 20 agree "${GW[us]}" "${GW[us]}" || fail "after clear, the record's groups=west never took: $(groups_of ie)"
ms=$(( $(now_ms) - t0 ))
for s in ie us; do
    [[ $(dig @"${ADDR[$s]}" -p $P +short kuadrant-active-groups.$Z TXT) == '"groups=west;version=1"' ]] ||
        fail "$s: the TXT is not served as the record wrote it: $(dig @"${ADDR[$s]}" -p $P +short kuadrant-active-groups.$Z TXT)"
done
grep -q "groups: active groups: \"west\" from the groups record of cluster us (\"groups=west;version=1\"); here DNSRecord gateways/active-groups holds kuadrant-active-groups.$Z" "$WORK/us.log" ||
    fail "us's log does not name the record: $(grep 'groups:' "$WORK/us.log")"
grep -q 'groups: active groups: "west" from the groups record of cluster us' "$WORK/ie.log" || fail "ie's log: $(grep 'groups:' "$WORK/ie.log")"
pass "glbd groups clear: the record's groups=west in force on both servers within $ms ms, its TXT served as written, the log naming it"

# Records that may not switch anything: another namespace's, and a name that only starts like the groups record.
kc us create namespace tenant >/dev/null 2>&1 || true
{ groups_record tenant grab 'version=1;groups=east'; echo ---
  cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: prefix, namespace: gateways, labels: {kuadrant.io/coredns-zone-name: $Z}}
spec:
  rootHost: shop.$Z
  endpoints: [{dnsName: kuadrant-active-groups.shop.$Z, recordType: TXT, targets: ['version=1;groups=east']}]
REC
} | kc us apply --validate=false -f - >/dev/null || fail "apply the hostile records"
wait_for 20 grep -q "DNSRecord tenant/grab: kuadrant-active-groups.$Z refused: only the namespaces of kubernetes.groupsFrom may set the active groups (gateways)" "$WORK/us.log" ||
    fail "tenant's groups record not refused: $(grep grab "$WORK/us.log")"
wait_for 20 bash -c "[[ -n \$(dig @${ADDR[ie]} -p $P +short kuadrant-active-groups.shop.$Z TXT) ]]" || fail "the prefix TXT is not served"
agree "${GW[us]}" "${GW[us]}" || fail "a hostile record switched the groups: $(groups_of ie)"
pass "a groups record from a namespace not in groupsFrom is refused (logged); a TXT at kuadrant-active-groups.shop.$Z is served and switches nothing"

# The record deleted: no groups record, no set: every group active again, and no TXT.
t0=$(now_ms)
kc us -n gateways delete dnsrecord active-groups >/dev/null || fail "delete the groups record"
wait_for 20 agree "${GW[ie]}" "${GW[us]}" || fail "after the record went: $(groups_of ie)"
for s in ie us; do
    [[ -z $(dig @"${ADDR[$s]}" -p $P +short kuadrant-active-groups.$Z TXT) ]] || fail "$s still serves the TXT of a deleted record"
done
pass "the groups record deleted: every group active on both servers within $(( $(now_ms) - t0 )) ms, no TXT"
for c in ie us; do stop_glbd $c; done
