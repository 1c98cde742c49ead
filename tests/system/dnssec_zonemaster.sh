#!/usr/bin/env bash
# Zonemaster (Debian's zonemaster-cli) over a signed glbd zone, calibrated against NSD: two peered clusters
# serve glb.example.com, signed online; NSD serves the same names and records, signed by BIND's
# dnssec-signzone. Zonemaster runs every test module (DNSSEC included) over each, undelegated with its DS,
# and glbd may have no finding at NOTICE or above that NSD's zone does not have too (the loopback addresses
# and the zone's own SOA values give both some). A DS that matches no key must be found, so the run can
# fail. Zonemaster queries port 53 and would look for the parent zone on the Internet: the test runs in a
# network namespace of its own, where only loopback exists.
source "$(dirname "$0")/netns.sh"
for tool in zonemaster-cli nsd dnssec-signzone dnssec-dsfromkey; do
    command -v "$tool" > /dev/null || fail "$tool is not installed (zonemaster-cli, nsd, bind9-utils: .ci/deps)"
done
ZONE=glb.example.com
IE=127.0.23.140 US=127.0.23.141 NSD1=127.0.23.142 NSD2=127.0.23.143

key=$("$GLBD" keygen --dnssec "$ZONE" --dir "$WORK") || fail "glbd keygen --dnssec"
for c in ie us; do
    addr=$IE ip=192.0.2.10 geo=IE default=true
    [[ $c == us ]] && addr=$US ip=198.51.100.10 geo=US default=false
    cat > "$WORK/$c.yaml" <<YAML
cluster: {id: $c, instance: $c-0}
listen: {dns: ["$addr:53"]}
zones:
  - origin: $ZONE
    nameservers: [{name: ns-ie.$ZONE, addresses: [$IE]}, {name: ns-us.$ZONE, addresses: [$US]}]
    records: "www 60 IN CNAME shop"
    dnssec: {keys: [$key]}
hosts:
  - name: shop.$ZONE
    ttl: 60
    endpoints: [$ip, "2001:db8::10"]
    loadBalancing: {geo: $geo, defaultGeo: $default}
$(peers_yaml --interval 500ms --dead 5s "$IE:53" "$US:53")
YAML
    start_glbd "$c" "$WORK/$c.yaml"
done
serves() { [[ -n $(answers "$1" 53 "$ZONE" SOA) ]]; }
wait_for 30 serves "$IE" && wait_for 30 serves "$US" || fail "glbd does not serve $ZONE within 30 s"

# NSD's zone: glbd's SOA values, the same names and records, its own key (a CSK, as glbd's: -z).
soa=$(answers "$IE" 53 "$ZONE" SOA)
mkdir -p "$WORK/nsd"
cat > "$WORK/nsd/zone" <<ZONEFILE
\$ORIGIN $ZONE.
\$TTL 60
@ IN SOA $soa
@ IN NS ns-ie
@ IN NS ns-us
ns-ie IN A $NSD1
ns-us IN A $NSD2
shop IN A 192.0.2.10
shop IN AAAA 2001:db8::10
www IN CNAME shop
ZONEFILE
( cd "$WORK/nsd" && nsd_key=$(dnssec-keygen -q -a ECDSAP256SHA256 -f KSK "$ZONE") &&
  echo "\$INCLUDE $nsd_key.key" >> zone && dnssec-signzone -q -z -o "$ZONE" -f zone.signed zone "$nsd_key" > /dev/null &&
  dnssec-dsfromkey -2 "$nsd_key.key" > ds ) || fail "signing NSD's zone with dnssec-signzone"
start_nsd nsd 53 "$ZONE" "$WORK/nsd/zone.signed" "$NSD1" "$NSD2"

zonemaster() {  # OUT DS NS...: the findings at NOTICE or above, "LEVEL MODULE TAG" a line (OUT.full: all)
    local out=$1 ds=$2 ns=()
    shift 2
    for n in "$@"; do ns+=(--ns "$n"); done
    timeout 120 zonemaster-cli --raw --no-ipv6 --show-testcase --level INFO "${ns[@]}" \
        --ds "$(awk '{print $4 "," $5 "," $6 "," $7}' <<< "$ds")" "$ZONE" > "$out.full" 2>&1 ||
        fail "zonemaster-cli failed: $(tail -n 5 "$out.full")"
    awk '$2 ~ /^(NOTICE|WARNING|ERROR|CRITICAL)$/ {print $2, $3, $4}' "$out.full" | sort -u > "$out"
}
ds=$("$GLBD" ds "$ZONE" --config "$WORK/ie.yaml") || fail "glbd ds"
zonemaster "$WORK/glbd.found" "$ds" "ns-ie.$ZONE/$IE" "ns-us.$ZONE/$US"
zonemaster "$WORK/nsd.found" "$(cat "$WORK/nsd/ds")" "ns-ie.$ZONE/$NSD1" "ns-us.$ZONE/$NSD2"
echo "--- zonemaster over NSD (calibration), NOTICE and above:"; cat "$WORK/nsd.found"
echo "--- zonemaster over glbd, NOTICE and above:"; cat "$WORK/glbd.found"
grep -q " DNSSEC05 .*ALGORITHM_OK" "$WORK/glbd.found.full" || fail "zonemaster ran no DNSSEC test over glbd: $(cat "$WORK/glbd.found.full")"
beyond=$(comm -23 "$WORK/glbd.found" "$WORK/nsd.found")
[[ -z $beyond ]] || fail "zonemaster finds in glbd's zone what it does not in NSD's:"$'\n'"$beyond"$'\n'"$(cat "$WORK/glbd.found.full")"
pass "Zonemaster (engine $(zonemaster-cli --version 2>&1 | awk '/Engine version/ {print $3}')): every test module over two signed glbd clusters, no finding beyond NSD's ($(wc -l < "$WORK/nsd.found") from the setup)"

# The same DS with its last digest digit changed: Zonemaster must say so.
bad_ds=$(sed -E 's/([0-9A-F])$/\1x/; s/0x$/1/; s/([1-9A-F])x$/0/' <<< "$ds")
zonemaster "$WORK/bad.found" "$bad_ds" "ns-ie.$ZONE/$IE" "ns-us.$ZONE/$US"
grep -E "^(ERROR|CRITICAL) DNSSEC" "$WORK/bad.found" > /dev/null || fail "zonemaster finds nothing wrong with a DS one digit off: $(cat "$WORK/bad.found.full")"
pass "with a DS one digit off it reports $(grep -E "^(ERROR|CRITICAL) DNSSEC" "$WORK/bad.found" | awk '{print $3}' | xargs)"
