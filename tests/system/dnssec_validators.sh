#!/usr/bin/env bash
# Two more validating resolvers from Debian beside unbound (system.dnssec_resolvers): Knot Resolver (kresd)
# and PowerDNS Recursor, each forwarding glb.example.com to glbd and trusting only the DS that `glbd ds`
# prints. Two peered clusters (ie, us) sign with a KSK and a ZSK. Both resolvers set AD for the
# load-balanced host, for a CNAME to it, for a name that does not exist (compact denial, RFC 9824) and a
# NODATA; PowerDNS Recursor sends EDNS Client Subnet, so a client in each geo gets its own cluster's
# address, validated. One more instance of each, given a DS with one digit changed, answers SERVFAIL, so
# the test can fail.
source "$(dirname "$0")/lib.sh"
for tool in kresd pdns_recursor; do
    command -v "$tool" > /dev/null || fail "$tool is not installed (knot-resolver, pdns-recursor: .ci/deps)"
done
ZONE=glb.example.com PORT=5630
IE=127.0.23.130 US=127.0.23.133 CLIENT_IE=127.0.23.134 CLIENT_US=127.0.23.135
declare -A RESOLVER=([kresd]=127.0.23.131 [pdns]=127.0.23.132 [kresd-bad]=127.0.23.136 [pdns-bad]=127.0.23.137)

ksk=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec"
zsk=$WORK/$(cd "$WORK" && dnssec-keygen -q -a ECDSAP256SHA256 "$ZONE") || fail "dnssec-keygen (ZSK)"
for c in ie us; do
    addr=$IE ip=192.0.2.10 geo=IE default=true
    [[ $c == us ]] && addr=$US ip=198.51.100.10 geo=US default=false
    cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["$addr:$PORT"]}
geoip:
  networks: {$CLIENT_IE/32: IE, $CLIENT_US/32: US}
zones:
  - origin: $ZONE
    ttl: 2
    soa: {minimum: 2}
    nameservers: [{name: ns-ie.$ZONE, addresses: [$IE]}, {name: ns-us.$ZONE, addresses: [$US]}]
    records: "www 2 IN CNAME shop"
    dnssec: {keys: [$ksk, $zsk]}
hosts:
  - name: shop.$ZONE
    ttl: 2
    endpoints: [$ip]
    loadBalancing: {geo: $geo, defaultGeo: $default}
$(peers_yaml --interval 500ms --dead 5s "$IE:$PORT" "$US:$PORT")
YAML
    start_glbd "$c" "$WORK/$c.yaml"
done
both_serve() {
    [[ $(answers "$IE" "$PORT" "shop.$ZONE" A -b "$CLIENT_US") == 198.51.100.10 ]] &&
        [[ $(answers "$US" "$PORT" "shop.$ZONE" A -b "$CLIENT_IE") == 192.0.2.10 ]]
}
wait_for 30 both_serve || fail "the clusters did not learn each other's entries within 30 s"

ds=$("$GLBD" ds "$ZONE" --config "$WORK/ie.yaml") || fail "glbd ds"
[[ $ds == "$(dnssec-dsfromkey -2 "$ksk.key")" ]] || fail "glbd ds printed $ds, dnssec-dsfromkey $(dnssec-dsfromkey -2 "$ksk.key")"
# The same DS with its last digest digit changed.
bad_ds=$(sed -E 's/([0-9A-F])$/\1x/; s/0x$/1/; s/([1-9A-F])x$/0/' <<< "$ds")
[[ $bad_ds != "$ds" ]] || fail "tampering with the DS"

start_kresd() {  # NAME DS
    local name=$1 addr=${RESOLVER[$1]}
    port_free "$addr" "$PORT" || fail "$addr:$PORT is already in use before $name starts (a leftover server?)"
    mkdir -p "$WORK/$name"
    cat > "$WORK/$name/kresd.conf" <<CONF
net.listen('$addr', $PORT, { kind = 'dns' })
trust_anchors.remove('.')
trust_anchors.add('$2')
policy.add(policy.suffix(policy.FORWARD({ '$IE@$PORT', '$US@$PORT' }), { todname('$ZONE.') }))
cache.size = 10 * MB
CONF
    kresd -n -c "$WORK/$name/kresd.conf" "$WORK/$name" >> "$WORK/$name.log" 2>&1 &
    PIDS+=("$!")
}
start_pdns() {  # NAME DS
    local name=$1 addr=${RESOLVER[$1]}
    port_free "$addr" "$PORT" || fail "$addr:$PORT is already in use before $name starts (a leftover server?)"
    mkdir -p "$WORK/$name"
    echo "addTA('$ZONE', '$(awk '{print $4, $5, $6, $7}' <<< "$2")')" > "$WORK/$name/ta.lua"
    # ECS with the client's whole address, for queries in the zone, whoever asks (the default leaves out
    # 127.0.0.0/8); dont-query empty, as the servers are on loopback.
    pdns_recursor --config-dir="$WORK/$name" --socket-dir="$WORK/$name" --daemon=no --disable-syslog \
        --local-address="$addr" --local-port="$PORT" --allow-from=127.0.0.0/8 --threads=1 --setuid= --setgid= \
        --forward-zones="$ZONE=$IE:$PORT;$US:$PORT" --dnssec=validate --lua-config-file="$WORK/$name/ta.lua" \
        --dont-query= --edns-subnet-allow-list="$ZONE" --ecs-add-for=0.0.0.0/0 --ecs-ipv4-bits=32 \
        --extended-resolution-errors=yes >> "$WORK/$name.log" 2>&1 &
    PIDS+=("$!")
}
start_kresd kresd "$ds"
start_pdns pdns "$ds"
start_kresd kresd-bad "$bad_ds"
start_pdns pdns-bad "$bad_ds"

resolve() {  # RESOLVER CLIENT NAME TYPE
    dig +dnssec +tries=1 +time=5 @"${RESOLVER[$1]}" -p "$PORT" -b "$2" "$3" "$4" 2>&1
}
validated() { grep -q "status: NOERROR" <<< "$1" && grep -q "flags:.* ad" <<< "$1"; }
for r in kresd pdns; do
    up() { validated "$(resolve "$1" "$CLIENT_IE" "$ZONE" SOA)"; }
    wait_for 30 up "$r" || fail "$r does not validate $ZONE SOA: $(resolve "$r" "$CLIENT_IE" "$ZONE" SOA)"
done
for r in kresd pdns; do
    clients=("$CLIENT_IE")
    [[ $r == pdns ]] && clients+=("$CLIENT_US")  # kresd sends no ECS: the default geo's answer
    for client in "${clients[@]}"; do
        want=192.0.2.10
        [[ $client == "$CLIENT_US" ]] && want=198.51.100.10
        for name in "shop.$ZONE" "www.$ZONE"; do
            out=$(resolve "$r" "$client" "$name" A)
            validated "$out" || fail "$r from $client, $name A: no AD: $out"$'\n'"$(tail -n 20 "$WORK/$r.log")"
            grep -q "^shop.$ZONE.	[0-9]*	IN	A	$want$" <<< "$out" || fail "$r from $client, $name A: not $want: $out"
        done
    done
    denials_validated "$r" resolve "$r" "$CLIENT_IE"
done
pass "Knot Resolver $(kresd --version | awk '{print $NF}'): AD for the load-balanced host, a CNAME to it, a name that does not exist and two NODATA"
pass "PowerDNS Recursor $(pdns_recursor --version 2>&1 | grep -o 'Recursor [0-9.]*' | head -n 1 | awk '{print $2}') with ECS: the same, and each geo's client gets its own cluster's address"

# Each says why in its own words (RFC 8914): no DNSKEY matches the DS.
declare -A REASON=([kresd-bad]="EDE: 6 (DNSSEC Bogus)" [pdns-bad]="EDE: 9 (DNSKEY Missing)")
for r in kresd-bad pdns-bad; do
    out=$(resolve "$r" "$CLIENT_IE" "shop.$ZONE" A)
    grep -q "status: SERVFAIL" <<< "$out" || fail "$r, with a tampered DS: not SERVFAIL: $out"
    grep -qF "${REASON[$r]}" <<< "$out" || fail "$r, with a tampered DS: not ${REASON[$r]}: $out"
done
pass "with a DS one digit off: SERVFAIL, ${REASON[kresd-bad]} from kresd, ${REASON[pdns-bad]} from PowerDNS Recursor"
