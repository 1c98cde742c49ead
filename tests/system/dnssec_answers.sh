#!/usr/bin/env bash
# Signed answers with a validating client (issue 38, parts 2 and 3): two peered clusters, ie and us, sign zone
# glb.example.com with the same key pair (a CSK from `glbd keygen --dnssec`); BIND's `delv`, trusting that
# key, says "fully validated" for the load-balanced host from each cluster for a client in each geo (the
# geo from geoip.networks over the client's loopback address), for a wildcard host, a static record and the
# apex's SOA, NS, DNSKEY, CDS and CDNSKEY (the CDS as BIND's dnssec-dsfromkey makes it), and "negative response, fully validated" for a name that does not exist and for
# one without the type asked (compact denial, RFC 9824). Under another key the same answers fail (the test
# can fail), and without DO no RRSIG is sent.
source "$(dirname "$0")/lib.sh"
for tool in delv ldns-verify-zone; do
    command -v "$tool" > /dev/null || fail "$tool is not installed (bind9-dnsutils, ldnsutils: .ci/deps)"
done
ZONE=glb.example.com
IE=127.0.23.112 US=127.0.23.113 CLIENT_IE=127.0.23.114 CLIENT_US=127.0.23.115 PORT=5612
key=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec"

for c in ie us; do
    addr=$IE ip=192.0.2.10 geo=IE
    [[ $c == us ]] && addr=$US ip=198.51.100.10 geo=US
    cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["$addr:$PORT"]}
geoip:
  networks: {$CLIENT_IE/32: IE, $CLIENT_US/32: US}
zones:
  - origin: $ZONE
    nameservers: [{name: ns-ie.$ZONE, addresses: [$IE]}, {name: ns-us.$ZONE, addresses: [$US]}]
    records: |
      www 300 IN TXT "static"
    dnssec: {keys: [$key]}
hosts:
  - name: shop.$ZONE
    endpoints: [$ip]
    loadBalancing: {geo: $geo, defaultGeo: $([[ $c == ie ]] && echo true || echo false)}
  - name: "*.apps.$ZONE"
    endpoints: [$ip]
    loadBalancing: {geo: $geo, defaultGeo: $([[ $c == ie ]] && echo true || echo false)}
$(peers_yaml --interval 500ms --dead 5s "$IE:$PORT" "$US:$PORT")
YAML
    start_glbd "$c" "$WORK/$c.yaml"
done

# The trust anchor: the key's DNSKEY, as delv reads it.
read -r owner _ _ flags proto alg pub <<< "$(grep -v '^;' "$key.key")"
printf 'trust-anchors {\n  %s static-key %s %s %s "%s";\n};\n' "$owner" "$flags" "$proto" "$alg" "$pub" > "$WORK/anchor"
validate() {  # SERVER CLIENT NAME TYPE [ANCHOR]: delv's output
    delv -a "${5:-$WORK/anchor}" +root="$ZONE" -b "$2" @"$1" -p "$PORT" "$3" "$4" 2>&1
}
both_serve() {
    [[ $(answers "$IE" "$PORT" "shop.$ZONE" A -b "$CLIENT_US") == 198.51.100.10 ]] &&
        [[ $(answers "$US" "$PORT" "shop.$ZONE" A -b "$CLIENT_IE") == 192.0.2.10 ]]
}
wait_for 30 both_serve || fail "the clusters did not learn each other's entries within 30 s"

for server in "$IE" "$US"; do
    for client in "$CLIENT_IE" "$CLIENT_US"; do
        want=192.0.2.10
        [[ $client == "$CLIENT_US" ]] && want=198.51.100.10
        out=$(validate "$server" "$client" "shop.$ZONE" A)
        [[ $out == "; fully validated"* ]] || fail "delv @$server from $client: $out"
        grep -q "^shop.$ZONE.	60	IN	A	$want$" <<< "$out" || fail "delv @$server from $client: not $want: $out"
        grep -q "RRSIG	A 13 4 60 " <<< "$out" || fail "no RRSIG in: $out"
    done
    for nt in "www.$ZONE TXT" "$ZONE SOA" "$ZONE NS" "$ZONE DNSKEY" "$ZONE CDS" "$ZONE CDNSKEY"; do
        read -r name type <<< "$nt"
        out=$(validate "$server" "$CLIENT_IE" "$name" "$type")
        [[ $out == "; fully validated"* ]] || fail "delv @$server $name $type: $out"
    done
    out=$(validate "$server" "$CLIENT_US" "any.apps.$ZONE" A)
    [[ $out == "; fully validated"* && $out == *"any.apps.$ZONE."*"IN	A	198.51.100.10"* ]] ||
        fail "delv @$server: the wildcard host: $out"
    for nt in "nope.$ZONE A" "x.y.nope.$ZONE TXT" "shop.$ZONE AAAA" "www.$ZONE A" "any.apps.$ZONE MX"; do
        read -r name type <<< "$nt"
        out=$(validate "$server" "$CLIENT_IE" "$name" "$type")
        [[ $out == *"; negative response, fully validated"* ]] || fail "delv @$server $name $type: $out"
    done
done
pass "delv: the load-balanced host for IE and US clients from both clusters, a wildcard host, a TXT, SOA, NS, DNSKEY, CDS and CDNSKEY: fully validated"

# The CDS is the DS BIND's dnssec-dsfromkey makes of the key (RFC 8078: what a parent that automates its DS
# takes), and the CDNSKEY the key itself.
want_cds=$(dnssec-dsfromkey -2 "$key.key" | awk '{$1 = $2 = $3 = ""; print}' | tr -d ' ')
want_cdnskey=$(grep -v '^;' "$key.key" | awk '{$1 = $2 = $3 = ""; print}' | tr -d ' ')
[[ -n $want_cds && -n $want_cdnskey ]] || fail "dnssec-dsfromkey -2 $key.key"
for server in "$IE" "$US"; do
    got=$(dig +short +norec @"$server" -p "$PORT" "$ZONE" CDS | tr -d ' ')
    [[ $got == "$want_cds" ]] || fail "CDS @$server: '$got', dnssec-dsfromkey: '$want_cds'"
    got=$(dig +short +norec @"$server" -p "$PORT" "$ZONE" CDNSKEY | tr -d ' ')
    [[ $got == "$want_cdnskey" ]] || fail "CDNSKEY @$server: '$got', the key file: '$want_cdnskey'"
done
pass "CDS and CDNSKEY at the apex from both clusters: the DS dnssec-dsfromkey makes of the key, and the key"
pass "delv: two names that do not exist and three without the type asked: negative response, fully validated"

# Another key under the same name does not validate them: the signatures are checked, not just present.
other=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec (a second key)"
read -r owner _ _ flags proto alg pub <<< "$(grep -v '^;' "$other.key")"
printf 'trust-anchors {\n  %s static-key %s %s %s "%s";\n};\n' "$owner" "$flags" "$proto" "$alg" "$pub" > "$WORK/wrong"
for nt in "shop.$ZONE A" "nope.$ZONE A"; do
    read -r name type <<< "$nt"
    out=$(validate "$IE" "$CLIENT_IE" "$name" "$type" "$WORK/wrong")
    [[ $out != *"fully validated"* && $out == *"resolution failed"* ]] || fail "validated under another key: $out"
done
pass "under another trust anchor the same answers (positive and negative) fail validation"

# The NSEC of a name that does not exist covers that name alone, and says so (NXNAME); with CO, NXDOMAIN.
out=$(q "$IE" "$PORT" "nope.$ZONE" A +dnssec)
grep -qF "nope.$ZONE.	60	IN	NSEC	\\000.nope.$ZONE. RRSIG NSEC TYPE128" <<< "$out" || fail "the compact NSEC: $out"
grep -q "status: NOERROR" <<< "$out" || fail "a compact denial without CO is NOERROR: $out"
# With DO and CO (dig cannot set CO): "RCODE EDNS-FLAGS" of the answer.
co=$(python3 - "$IE" "$PORT" "nope.$ZONE" <<'PY'
import socket, struct, sys
addr, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
q = struct.pack(">HHHHHH", 0x4242, 0, 1, 0, 0, 1)
q += b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0" + struct.pack(">HH", 1, 1)
q += b"\0" + struct.pack(">HHIH", 41, 1232, 0xC000, 0)  # OPT: DO | CO
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(q, (addr, port))
r = s.recv(4096)
print(r[3] & 0x0F, hex(struct.unpack(">H", r[-4:-2])[0]))  # the OPT (no options) is last
PY
) || fail "the CO query"
[[ $co == "3 0xc000" ]] || fail "with CO: rcode and EDNS flags $co, not NXDOMAIN with DO and CO echoed"
pass "compact denial: one NSEC at the name, \\000.name next, NXNAME in its bitmap; NXDOMAIN and CO echoed with CO"
for name in "nope.$ZONE" "$ZONE"; do  # NXNAME is a meta type: asking for it is FORMERR (RFC 9824 3.5)
    q "$IE" "$PORT" "$name" TYPE128 +dnssec | grep -q "status: FORMERR" || fail "$name TYPE128 (NXNAME): not FORMERR"
done
pass "a query for NXNAME (TYPE128) is FORMERR"

# Without DO, no signature; with it, one per RRset (a CSK signs everything).
plain=$(q "$IE" "$PORT" "shop.$ZONE" A -b "$CLIENT_IE")
grep -q RRSIG <<< "$plain" && fail "an RRSIG without DO: $plain"
signed=$(q "$IE" "$PORT" "shop.$ZONE" A -b "$CLIENT_IE" +dnssec)
[[ $(grep -c "IN	RRSIG	A 13 " <<< "$signed") == 1 ]] || fail "not one RRSIG over the A set: $signed"
pass "no RRSIG without DO, one with it"

# ldns-verify-zone over every RRset each cluster answers a client of each geo with (the apex's, the static
# TXT, the name servers' addresses, the load-balanced host's), the key as its trust anchor: every signature
# verifies. glbd's denials are compact (RFC 9824), with no NSEC chain to check, so the only errors it may
# report are "no NSEC(3)" for each name; a signature changed by one character is "Bogus".
grep -v '^;' "$key.key" > "$WORK/anchor.key"
answer_set() {  # SERVER CLIENT: the answers, as a zone file
    local nt name type
    for nt in "$ZONE SOA" "$ZONE NS" "$ZONE DNSKEY" "$ZONE CDS" "$ZONE CDNSKEY" "www.$ZONE TXT" "ns-ie.$ZONE A" \
        "ns-us.$ZONE A" "shop.$ZONE A"; do
        read -r name type <<< "$nt"
        dig +dnssec +norec +noall +answer +time=2 +tries=1 @"$1" -p "$PORT" -b "$2" "$name" "$type"
    done
}
verify_zone() {  # FILE: ldns-verify-zone's errors other than the missing NSEC chain
    ldns-verify-zone -k "$WORK/anchor.key" "$1" 2>&1 | grep "^Error" | grep -v "^Error: there is no NSEC(3) for " || true
}
for server in "$IE" "$US"; do
    for client in "$CLIENT_IE" "$CLIENT_US"; do
        answer_set "$server" "$client" > "$WORK/answers.zone"
        [[ $(grep -c "	RRSIG	" "$WORK/answers.zone") == 9 ]] || fail "not 9 signed RRsets: $(cat "$WORK/answers.zone")"
        errors=$(verify_zone "$WORK/answers.zone")
        [[ -z $errors ]] || fail "ldns-verify-zone @$server from $client: $errors"$'\n'"$(cat "$WORK/answers.zone")"
    done
done
python3 - "$WORK/answers.zone" > "$WORK/tampered.zone" <<'PY'
import sys
for line in open(sys.argv[1]):
    if line.startswith("shop.") and "\tRRSIG\tA 13 " in line:  # the signature's first character, changed
        rdata = line.split("\t")[-1].split(" ")
        rdata[8] = ("B" if rdata[8][0] == "A" else "A") + rdata[8][1:]
        line = "\t".join(line.split("\t")[:-1] + [" ".join(rdata)])
    sys.stdout.write(line)
PY
cmp -s "$WORK/answers.zone" "$WORK/tampered.zone" && fail "tampering with the host's RRSIG"
[[ $(verify_zone "$WORK/tampered.zone") == "Error: Bogus DNSSEC signature for shop.$ZONE.	A" ]] ||
    fail "ldns-verify-zone over a tampered signature: $(verify_zone "$WORK/tampered.zone")"
pass "ldns-verify-zone: the 9 RRsets each cluster gives each geo's client verify under the key; a signature one character off is Bogus"
stop_glbd ie
stop_glbd us
