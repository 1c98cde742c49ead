#!/usr/bin/env bash
# Four servers holding the same global view give the same SOA serial (a zone checker's MULTIPLE_SOA_SERIALS
# otherwise), and it rises on every change: a peer's change, a reload, a restart.
source "$(dirname "$0")/lib.sh"
P=5480
NODES=(a b c d)
declare -A ADDR=([a]=127.0.0.181 [b]=127.0.0.182 [c]=127.0.0.183 [d]=127.0.0.184)
members=("${ADDR[a]}:$P" "${ADDR[b]}:$P" "${ADDR[c]}:$P" "${ADDR[d]}:$P")
i=0
for n in "${NODES[@]}"; do
    i=$((i + 1))
cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["${ADDR[$n]}:$P"]}
zones:
  - origin: serial.test
    nameservers: [{name: ns1.serial.test, addresses: [${ADDR[a]}]}]
    records: |
      www IN A 192.0.2.200
hosts:
  - {name: app.serial.test, endpoints: [192.0.2.$i]}
$(peers_yaml --interval 300ms --dead 5s "${members[@]}")
YAML
done
# Started in different seconds: a serial from each server's own clock would differ.
for n in "${NODES[@]}"; do start_glbd $n "$WORK/$n.yaml"; sleep 1.1; done
serial() { dig @${ADDR[$1]} -p $P +short +norec serial.test SOA | awk '{print $3}'; }
serials() { for n in "${NODES[@]}"; do serial $n; done | tr '\n' ' '; }
# all_equal_above MIN: every server answers the same serial, newer than MIN (RFC 1982; "none": any), and
# serves all four clusters' endpoints.
all_equal_above() {
    local s0 n s
    s0=$(serial a)
    [[ -n $s0 ]] || return 1
    for n in "${NODES[@]}"; do
        s=$(serial $n)
        [[ $s == "$s0" ]] || return 1
        [[ $(answers ${ADDR[$n]} $P app.serial.test A | wc -l) == 4 ]] || return 1
    done
    [[ $1 == none ]] || (( (s0 - $1 + 4294967296) % 4294967296 > 0 && (s0 - $1 + 4294967296) % 4294967296 < 2147483648 ))
}
wait_for 20 all_equal_above none || fail "the four servers do not agree on a serial: $(serials)"
s1=$(serial a)
pass "four servers, one serial: $s1"

# A change on b (a reload with another endpoint): every server's serial rises, to the same value.
sed -i 's/endpoints: \[192.0.2.2\]/endpoints: [192.0.2.22]/' "$WORK/b.yaml"
kill -HUP "$PID_b"
wait_for 20 all_equal_above "$s1" || fail "after b's change the serials are $(serials) (were $s1)"
s2=$(serial a)
answers ${ADDR[d]} $P app.serial.test A | grep -qx 192.0.2.22 || fail "d does not serve b's change"
pass "b's change: every serial rose from $s1 to $s2"

# A restart of c (no stateDir): a new life with versions from its clock; serials rise and agree again.
stop_glbd c
start_glbd c "$WORK/c.yaml"
wait_for 20 all_equal_above "$s2" || fail "after c's restart the serials are $(serials) (were $s2)"
pass "c restarted: every serial rose from $s2 to $(serial a)"
for n in "${NODES[@]}"; do stop_glbd $n; done
