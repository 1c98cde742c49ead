#!/usr/bin/env bash
# health.sourceAddress: every probe leaves from that address, so another cluster's firewall can allow one
# known egress address. HTTP and TCP probes of IPv4 endpoints come from it (the targets log each client's
# address); a probe of an IPv6 endpoint, the other family, from the kernel's choice; a reload to another
# source moves the next probes to it; a source that is not an address of this host makes every probe fail,
# with the reason shown (never a probe from somewhere else).
source "$(dirname "$0")/lib.sh"
A=127.0.0.66 P=5366 T=127.0.0.67 SRC=127.0.0.68 SRC2=127.0.0.69 HP=18066 TP=18067 H6=18068 ADMIN=127.0.0.66:9366
TARGETS="$(dirname "$0")/../tools/targets.py"
python3 "$TARGETS" --http "$T:$HP" --tcp "$T:$TP" --http "[::1]:$H6" --log "$WORK/targets.log" \
    --ready "$WORK/targets.ready" >"$WORK/targets.out" 2>&1 &
PIDS+=("$!")
wait_for 10 test -e "$WORK/targets.ready" || fail "the targets did not start"

config() {  # SOURCE
    cat <<YAML
cluster: {id: ps-1}
listen: {dns: ["$A:$P"]}
admin: {listen: "$ADMIN"}
health: {sourceAddress: "$1"}
zones:
  - origin: ps.test
    nameservers: [{name: ns.ps.test, addresses: [$A]}]
hosts:
  - {name: web.ps.test, endpoints: [$T], healthCheck: {protocol: HTTP, port: $HP, path: /healthz, interval: 300ms}}
  - {name: tcp.ps.test, endpoints: [$T], healthCheck: {protocol: TCP, port: $TP, interval: 300ms}}
  - {name: six.ps.test, endpoints: ["::1"], healthCheck: {protocol: HTTP, port: $H6, path: /healthz, interval: 300ms}}
YAML
}
config "$SRC" > "$WORK/glbd.yaml"
start_glbd ps "$WORK/glbd.yaml"
wait_for 10 grep -q 'first round complete' "$WORK/ps.log" || fail "no first health round"

# sources PROTO PORT: the client addresses the target on PORT saw, each once, in the order first seen.
sources() {
    python3 - "$WORK/targets.log" "$1" "$2" <<'PY'
import json, sys
seen = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["proto"] == sys.argv[2] and r["port"] == int(sys.argv[3]) and r["source"] not in seen:
        seen.append(r["source"])
print(" ".join(seen))
PY
}
probed_at_least() {  # N: lines in the targets' log
    (( $(wc -l < "$WORK/targets.log") >= $1 ))
}
wait_for 10 probed_at_least 12 || fail "the targets saw too few probes: $(wc -l < "$WORK/targets.log")"
[[ $(sources http $HP) == "$SRC" ]] || fail "HTTP probes came from '$(sources http $HP)', not $SRC"
[[ $(sources tcp $TP) == "$SRC" ]] || fail "TCP probes came from '$(sources tcp $TP)', not $SRC"
[[ $(sources http $H6) == "::1" ]] || fail "the IPv6 endpoint's probes came from '$(sources http $H6)', not ::1"
[[ $(answers $A $P web.ps.test A) == "$T" ]] || fail "web.ps.test is not answered"
pass "HTTP and TCP probes of IPv4 endpoints leave from $SRC; the IPv6 endpoint's from the kernel's choice (::1)"

# A reload to another source: the probes after it come from there.
config "$SRC2" > "$WORK/glbd.yaml"
verdict=$(reload_verdict ps)
[[ $verdict == *reloaded* ]] || fail "the reload: $verdict"
lines=$(wc -l < "$WORK/targets.log")
wait_for 10 probed_at_least $((lines + 12)) || fail "no probes after the reload"
after=$(tail -n +$((lines + 1)) "$WORK/targets.log" | python3 -c '
import json, sys
print(" ".join(sorted({json.loads(l)["source"] for l in sys.stdin if json.loads(l)["proto"] != "http" or json.loads(l)["port"] != '"$H6"'})))')
[[ $after == "$SRC2" ]] || fail "after the reload, IPv4 probes came from '$after', not $SRC2"
pass "a reload moves the probes to $SRC2"

# A source this host does not have: the probes fail, saying why; none leaves from another address.
config 192.0.2.1 > "$WORK/glbd.yaml"
verdict=$(reload_verdict ps)
[[ $verdict == *reloaded* ]] || fail "the reload: $verdict"
wait_for 10 bash -c "curl -s --interface 127.0.0.1 http://$ADMIN/v1/state | grep -q 'bind'" ||
    fail "no probe failure naming the bind: $(curl -s --interface 127.0.0.1 "http://$ADMIN/v1/state" | head -c 600)"
lines=$(wc -l < "$WORK/targets.log")
sleep 1
strays=$(tail -n +$((lines + 1)) "$WORK/targets.log" | grep -v '"::1"' || true)
[[ -z $strays ]] || fail "probes left from elsewhere: $strays"
pass "a source address this host lacks fails the IPv4 probes with the reason ($(curl -s --interface 127.0.0.1 \
    "http://$ADMIN/v1/state" | grep -o '"reason": *"[^"]*bind[^"]*"' | sort -u | paste -sd' '))"
stop_glbd ps
