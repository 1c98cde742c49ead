#!/usr/bin/env bash
# A real chain of trust (issue 38, tests with real parts): the parent example.com, signed with BIND's
# dnssec-signzone and served by NSD, delegates glb.example.com to two peered glbd clusters (ie, us) with a
# DS that BIND's dnssec-dsfromkey made of glbd's key. unbound, validating from the parent's key alone and
# sending EDNS Client Subnet, sets AD for the load-balanced host for a client in each geo (each gets its own
# cluster's address), for a name that does not exist and for a NODATA, through each cluster. A parent whose
# DS was tampered with makes the same answer SERVFAIL, so the test can fail. Then a ZSK rollover runs through
# while unbound keeps answering with AD: removing the old ZSK too early is refused (RFC 7583).
source "$(dirname "$0")/lib.sh"
for tool in nsd unbound dnssec-signzone dnssec-dsfromkey dnsviz; do
    command -v "$tool" > /dev/null || fail "$tool is not installed (nsd, unbound, bind9-utils, dnsviz: .ci/deps)"
done
ZONE=glb.example.com PARENT=example.com PORT=5620
NSD=127.0.23.120 IE=127.0.23.121 US=127.0.23.122 CLIENT_IE=127.0.23.124 CLIENT_US=127.0.23.125
NSD_BAD=127.0.23.127
declare -A UNBOUND=([ie]=127.0.23.123 [us]=127.0.23.126 [bad]=127.0.23.128)

# glbd's keys: a KSK (the DS points at it) from glbd, a ZSK from BIND's dnssec-keygen, and a second ZSK
# for the rollover at the end. TTLs of 2 s keep the rollover's hold time short.
key=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec"
zsk1=$WORK/$(cd "$WORK" && dnssec-keygen -q -a ECDSAP256SHA256 "$ZONE") || fail "dnssec-keygen (ZSK 1)"
zsk2=$WORK/$(cd "$WORK" && dnssec-keygen -q -a ECDSAP256SHA256 "$ZONE") || fail "dnssec-keygen (ZSK 2)"
config() {  # CLUSTER KEYS...
    local c=$1 addr=$IE ip=192.0.2.10 geo=IE
    shift
    [[ $c == us ]] && addr=$US ip=198.51.100.10 geo=US
    cat <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["$addr:$PORT"]}
geoip:
  networks: {$CLIENT_IE/32: IE, $CLIENT_US/32: US}
zones:
  - origin: $ZONE
    ttl: 2
    soa: {minimum: 2}
    nameservers: [{name: ns-ie.$ZONE, addresses: [$IE]}, {name: ns-us.$ZONE, addresses: [$US]}]
    dnssec: {keys: [$(IFS=,; echo "$*")]}
hosts:
  - name: shop.$ZONE
    ttl: 2
    endpoints: [$ip]
    loadBalancing: {geo: $geo, defaultGeo: $([[ $c == ie ]] && echo true || echo false)}
$(peers_yaml --interval 500ms --dead 5s "$IE:$PORT" "$US:$PORT")
YAML
}
for c in ie us; do
    config "$c" "$key" "$zsk1" > "$WORK/$c.yaml"
    start_glbd "$c" "$WORK/$c.yaml"
done

# The parent: a KSK and a ZSK from dnssec-keygen, the delegation with glue, and the DS of glbd's key.
mkdir -p "$WORK/parent"
( cd "$WORK/parent" &&
  dnssec-keygen -q -a ECDSAP256SHA256 -f KSK "$PARENT" > ksk &&
  dnssec-keygen -q -a ECDSAP256SHA256 "$PARENT" > zsk ) || fail "dnssec-keygen for $PARENT"
ds=$(dnssec-dsfromkey -2 "$key.key") || fail "dnssec-dsfromkey"
parent_zone() {  # DS-RECORD OUT: the parent zone, signed
    cat > "$WORK/parent/zone" <<ZONEFILE
\$ORIGIN $PARENT.
\$TTL 300
@ IN SOA ns.$PARENT. hostmaster.$PARENT. 1 3600 600 86400 300
@ IN NS ns.$PARENT.
ns IN A $NSD
glb IN NS ns-ie.glb.$PARENT.
glb IN NS ns-us.glb.$PARENT.
ns-ie.glb IN A $IE
ns-us.glb IN A $US
$1
\$INCLUDE $(cat "$WORK/parent/ksk").key
\$INCLUDE $(cat "$WORK/parent/zsk").key
ZONEFILE
    (cd "$WORK/parent" && dnssec-signzone -q -o "$PARENT" -f "$2" zone "$(cat zsk)" "$(cat ksk)") > /dev/null ||
        fail "dnssec-signzone"
}
parent_zone "$ds" "$WORK/parent/good.signed"
# The same DS with one digest digit changed.
bad_ds=$(sed -E 's/([0-9A-F])$/\1x/; s/0x$/1/; s/([1-9A-F])x$/0/' <<< "$ds")
[[ $bad_ds != "$ds" ]] || fail "tampering with the DS"
parent_zone "$bad_ds" "$WORK/parent/bad.signed"

start_nsd nsd "$PORT" "$PARENT" "$WORK/parent/good.signed" "$NSD"
start_nsd nsd-bad "$PORT" "$PARENT" "$WORK/parent/bad.signed" "$NSD_BAD"

# unbound: the parent's KSK its only trust anchor; the parent and glb.example.com as stubs (the servers are
# on port $PORT, not 53); ECS to glbd with the client's whole address.
anchor=$(grep -v '^;' "$WORK/parent/$(cat "$WORK/parent/ksk").key")
start_unbound() {  # NAME PARENT-SERVER GLBD-SERVERS...
    local name=$1 parent=$2 addr=${UNBOUND[$1]}
    shift 2
    port_free "$addr" "$PORT" || fail "$addr:$PORT is already in use before unbound $name starts (a leftover server?)"
    mkdir -p "$WORK/unbound-$name"
    {
        cat <<CONF
server:
    interface: $addr@$PORT
    port: $PORT
    access-control: 127.0.0.0/8 allow
    do-not-query-localhost: no
    username: ""
    chroot: ""
    directory: "$WORK/unbound-$name"
    pidfile: "$WORK/unbound-$name/unbound.pid"
    use-syslog: no
    logfile: "$WORK/unbound-$name/unbound.log"
    verbosity: 1
    val-log-level: 2
    num-threads: 1
    trust-anchor: "$anchor"
    module-config: "subnetcache validator iterator"
    max-client-subnet-ipv4: 32
CONF
        for g in "$@"; do echo "    send-client-subnet: $g"; done
        printf 'stub-zone:\n    name: "%s"\n    stub-addr: %s@%s\n' "$PARENT" "$parent" "$PORT"
        printf 'stub-zone:\n    name: "%s"\n' "$ZONE"
        for g in "$@"; do echo "    stub-addr: $g@$PORT"; done
        printf 'remote-control:\n    control-enable: no\n'
    } > "$WORK/unbound-$name/unbound.conf"
    unbound-checkconf "$WORK/unbound-$name/unbound.conf" > /dev/null || fail "unbound-checkconf $name"
    unbound -d -c "$WORK/unbound-$name/unbound.conf" >> "$WORK/unbound-$name/out" 2>&1 &
    PIDS+=("$!")
}
start_unbound ie "$NSD" "$IE"
start_unbound us "$NSD" "$US"
start_unbound bad "$NSD_BAD" "$IE" "$US"

both_serve() {
    [[ $(answers "$IE" "$PORT" "shop.$ZONE" A -b "$CLIENT_US") == 198.51.100.10 ]] &&
        [[ $(answers "$US" "$PORT" "shop.$ZONE" A -b "$CLIENT_IE") == 192.0.2.10 ]]
}
wait_for 30 both_serve || fail "the clusters did not learn each other's entries within 30 s"
resolve() {  # RESOLVER CLIENT NAME TYPE: dig's answer through unbound
    dig +dnssec +tries=1 +time=5 @"${UNBOUND[$1]}" -p "$PORT" -b "$2" "$3" "$4" 2>&1
}
up() { resolve "$1" "$CLIENT_IE" "$PARENT" SOA | grep -q "flags:.* ad"; }
for r in ie us; do
    wait_for 30 up "$r" || fail "unbound $r does not validate $PARENT SOA: $(resolve "$r" "$CLIENT_IE" "$PARENT" SOA)"
done

for r in ie us; do  # through each cluster
    for client in "$CLIENT_IE" "$CLIENT_US"; do
        want=192.0.2.10
        [[ $client == "$CLIENT_US" ]] && want=198.51.100.10
        out=$(resolve "$r" "$client" "shop.$ZONE" A)
        grep -q "status: NOERROR" <<< "$out" && grep -q "flags:.* ad" <<< "$out" ||
            fail "unbound $r from $client: no AD: $out"$'\n'"$(tail -n 20 "$WORK/unbound-$r/unbound.log")"
        grep -q "^shop.$ZONE.	[0-9]*	IN	A	$want$" <<< "$out" || fail "unbound $r from $client: not $want: $out"
    done
    denials_validated "unbound $r" resolve "$r" "$CLIENT_IE"
done
pass "unbound (ECS, trust anchored at $PARENT signed by dnssec-signzone, served by NSD): AD for the load-balanced host for IE and US clients through each cluster, each its own geo's address"
pass "unbound: AD for a name that does not exist and for two NODATA, through each cluster"

out=$(resolve bad "$CLIENT_IE" "shop.$ZONE" A)
grep -q "status: SERVFAIL" <<< "$out" || fail "with a tampered DS: not SERVFAIL: $out"
out=$(resolve bad "$CLIENT_IE" "$PARENT" SOA)
grep -q "flags:.* ad" <<< "$out" || fail "the tampered parent itself does not validate: $out"
grep -q "validation failure <shop.$ZONE. A IN>: DS hash mismatches key" "$WORK/unbound-bad/unbound.log" ||
    fail "unbound gives another reason: $(grep "validation failure" "$WORK/unbound-bad/unbound.log")"
pass "a parent with a tampered DS (itself validated): SERVFAIL for the host, unbound says \"DS hash mismatches key\""

# DNSViz (Debian's): the same chain probed from the parent's server and both clusters, trusting the parent's
# KSK alone. Every RRset, RRSIG, DS, DNSKEY and denial is secure ([.]), with no error or warning; through the
# tampered parent it finds the DS's digest invalid.
echo "$anchor" > "$WORK/anchor"
dnsviz_print() {  # PARENT-SERVER OUT
    (cd "$WORK" && timeout 60 dnsviz probe -A -a "$PARENT" -x "$PARENT+:ns.$PARENT=$1:$PORT" \
        -x "$ZONE:ns-ie.$ZONE=$IE:$PORT,ns-us.$ZONE=$US:$PORT" "$ZONE" "shop.$ZONE" "nope.$ZONE" > "$2.json" 2> "$2.err" &&
        dnsviz print -t anchor < "$2.json" > "$2" 2>> "$2.err") || fail "dnsviz: $(cat "$2.err")"
}
dnsviz_print "$NSD" "$WORK/dnsviz"
grep -q "^  \[\.\]  A: 192.0.2.10$" "$WORK/dnsviz" || fail "dnsviz: no secure A for shop.$ZONE: $(cat "$WORK/dnsviz")"
grep -q "NSEC: nope.$ZONE. \\\\000.nope.$ZONE. RRSIG NSEC TYPE128" "$WORK/dnsviz" || fail "dnsviz: no compact denial: $(cat "$WORK/dnsviz")"
not_secure=$(grep "^ " "$WORK/dnsviz" | grep -v "\[\.\]" || true)
[[ -z $not_secure ]] || fail "dnsviz finds what is not secure: $not_secure"$'\n'"$(cat "$WORK/dnsviz")"
dnsviz_print "$NSD_BAD" "$WORK/dnsviz-bad"
grep -q "E:DIGEST_INVALID" "$WORK/dnsviz-bad" || fail "dnsviz over the tampered DS: $(cat "$WORK/dnsviz-bad")"
pass "dnsviz $(dpkg-query -W -f='${Version}' dnsviz): $(grep -c "\[\.\]" "$WORK/dnsviz") secure statuses from the parent's KSK to shop.$ZONE, an apex NODATA and nope.$ZONE's compact denial, none otherwise; E:DIGEST_INVALID for the tampered DS"
# A ZSK rollover (double signature) while both resolvers answer a query every 100 ms: ZSK 2 beside ZSK 1 on
# both clusters; removing ZSK 1 at once is refused (the old keys stay); once the hold time has passed it is
# taken. Not one answer may lose AD or fail.
( end=$(( $(date +%s) + 60 ))
  while [[ ! -e $WORK/stop-asking ]] && (( $(date +%s) < end )); do
      for r in ie us; do
          out=$(resolve "$r" "$CLIENT_IE" "shop.$ZONE" A)
          if grep -q "status: NOERROR" <<< "$out" && grep -q "flags:.* ad" <<< "$out"; then echo ok; else
              echo "BAD $r: $(grep -E "status|flags" <<< "$out" | tr '\n' ' ')"
          fi
      done
      sleep 0.1
  done > "$WORK/asked" ) &
asker=$!
reload() { reload_verdict "$1" | grep -q "reloaded "; }  # CLUSTER: true when it reloaded, false when it refused
published() { dnskey_tags "$1" "$PORT" "$ZONE"; }  # SERVER
sleep 2
for c in ie us; do
    config "$c" "$key" "$zsk1" "$zsk2" > "$WORK/$c.yaml"
    reload "$c" || fail "$c refused ZSK 2 beside ZSK 1: $(tail -n 3 "$WORK/$c.log")"
done
started=$(date +%s)
for c in ie us; do config "$c" "$key" "$zsk2" > "$WORK/$c.yaml"; done
reload ie && fail "ie removed ZSK 1 at once"
grep -q "reload refused: zone $ZONE: removing key tag $(key_tag "$zsk1") now would break validation: key tag $(key_tag "$zsk2") was published" "$WORK/ie.log" ||
    fail "ie's refusal: $(grep "reload refused" "$WORK/ie.log")"
want=$(printf '%s\n' "$(key_tag "$key")" "$(key_tag "$zsk1")" "$(key_tag "$zsk2")" | sort -n | xargs)
[[ $(published "$IE") == "$want" ]] || fail "after the refusal ie publishes $(published "$IE"), not $want"
pass "ZSK 2 beside ZSK 1 taken at once; removing ZSK 1 right after is refused (RFC 7583) and the three keys stay"
for c in ie us; do
    taken() { reload "$1"; }
    wait_for 30 taken "$c" || fail "$c did not take the removal within 30 s: $(grep "reload refused" "$WORK/$c.log" | tail -n 1)"
done
took=$(( $(date +%s) - started ))
want=$(printf '%s\n' "$(key_tag "$key")" "$(key_tag "$zsk2")" | sort -n | xargs)
for server in "$IE" "$US"; do
    [[ $(published "$server") == "$want" ]] || fail "$server publishes $(published "$server"), not $want"
    signer=$(dig +norec +dnssec @"$server" -p "$PORT" "shop.$ZONE" A | awk '$4 == "RRSIG" {print $11}')
    [[ $signer == "$(key_tag "$zsk2")" ]] || fail "$server: shop is signed by $signer, not ZSK 2 ($(key_tag "$zsk2"))"
done
sleep 3  # the resolvers' cached answers (TTL 2) expire and are asked again under the new keys
touch "$WORK/stop-asking"
wait "$asker"
asked=$(grep -c . "$WORK/asked")
bad=$(grep -c BAD "$WORK/asked" || true)
(( asked >= 20 && bad == 0 )) || fail "$bad of $asked answers during the rollover failed or lacked AD: $(grep -m3 BAD "$WORK/asked")"
pass "ZSK rollover: ZSK 1 removed after ${took} s, both clusters publish $want and sign with ZSK 2; unbound answered $asked queries with AD, none failed"
stop_glbd ie
stop_glbd us
