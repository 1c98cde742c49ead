#!/usr/bin/env bash
# DNSSEC keys with BIND's and ldns's tools (issue 38, part 1): pairs written by `glbd keygen --dnssec` are
# read by BIND (dnssec-dsfromkey gives the DS `glbd ds` prints; dnssec-signzone signs a zone with them and
# dnssec-verify accepts it), and pairs written by dnssec-keygen and ldns-keygen load in `glbd check`; a pair
# glbd does not sign with, or one open to every user, is refused with its file and key path named.
source "$(dirname "$0")/lib.sh"
for tool in dnssec-keygen dnssec-dsfromkey dnssec-signzone dnssec-verify ldns-keygen; do
    command -v "$tool" > /dev/null || fail "$tool is not installed (bind9-utils, ldnsutils: .ci/deps)"
done
ZONE=glb.example.com
K=$WORK/keys
mkdir -p "$K"

config() {  # KEY_PATH...: a config whose zone is signed with these keys
    echo "cluster: {id: a}"
    echo "listen: {dns: [\"127.0.23.110:5610\"]}"
    echo "zones:"
    echo "  - origin: $ZONE"
    echo "    nameservers: [{name: ns1.$ZONE, addresses: [127.0.23.110]}]"
    echo "    dnssec:"
    echo "      keys:"
    for k in "$@"; do echo "        - $k"; done
    echo "hosts: []"
}
has() { [[ $1 == *"$2"* ]] || fail "expected \"$2\" in: $1"; }
# The DS lines of a DS list, upper-cased and with single spaces, sorted: to compare tools' output.
norm_ds() { awk '$0 !~ /^;/ && NF {print tolower($1), "IN DS", $(NF-3), $(NF-2), $(NF-1), toupper($NF)}' | sort; }

# glbd's own keys: BIND reads both halves.
ecdsa=$("$GLBD" keygen --dnssec "$ZONE" --dir "$K") || fail "glbd keygen --dnssec"
ed=$("$GLBD" keygen --dnssec "$ZONE." --algorithm 15 --dir "$K") || fail "glbd keygen --dnssec --algorithm 15"
[[ $ecdsa == "$K/K$ZONE.+013+"* && $ed == "$K/K$ZONE.+015+"* ]] || fail "keygen printed $ecdsa and $ed"
[[ $(stat -c %a "$ecdsa.private") == 600 ]] || fail "the private key is mode $(stat -c %a "$ecdsa.private")"
config "$ecdsa" "$ed" > "$WORK/glbd.yaml"
out=$("$GLBD" check --config "$WORK/glbd.yaml") || fail "glbd check refused its own keys"
tag13=${ecdsa##*+} tag15=${ed##*+}
has "$out" "  zone $ZONE: DNSSEC keys: tag $((10#$tag13)), KSK/CSK, ECDSAP256SHA256; tag $((10#$tag15)), KSK/CSK, ED25519"
"$GLBD" ds "$ZONE" --config "$WORK/glbd.yaml" > "$WORK/ds.glbd" || fail "glbd ds"
for k in "$ecdsa" "$ed"; do dnssec-dsfromkey -2 "$k.key"; done > "$WORK/ds.bind" || fail "dnssec-dsfromkey"
[[ $(norm_ds < "$WORK/ds.glbd") == "$(norm_ds < "$WORK/ds.bind")" && $(wc -l < "$WORK/ds.glbd") == 2 ]] ||
    fail "glbd ds and dnssec-dsfromkey differ: $(cat "$WORK/ds.glbd") / $(cat "$WORK/ds.bind")"
out=$("$GLBD" ds other.example --config "$WORK/glbd.yaml" 2>&1) && fail "glbd ds of a zone not in the config"
has "$out" "no zone other.example in"

cat > "$WORK/zone" <<EOF
\$TTL 300
@    IN SOA ns1 hostmaster 1 3600 600 86400 60
     IN NS  ns1
ns1  IN A   127.0.23.110
www  IN A   192.0.2.10
EOF
cat "$ecdsa.key" >> "$WORK/zone"
(cd "$WORK" && dnssec-signzone -q -K "$K" -o "$ZONE" -S -z zone > /dev/null 2> signzone.err) ||
    fail "dnssec-signzone cannot sign with glbd's keys: $(cat "$WORK/signzone.err")"
dnssec-verify -q -z -o "$ZONE" "$WORK/zone.signed" 2> "$WORK/verify.err" ||
    fail "dnssec-verify refused the zone signed with glbd's keys: $(cat "$WORK/verify.err")"
grep -q "RRSIG.*DNSKEY 13 " "$WORK/zone.signed" || fail "no signature made with glbd's ECDSA key"

# BIND's and ldns's keys: glbd loads them, and prints the DS of the KSK only.
cd "$K"
bind_ksk=$K/$(dnssec-keygen -q -a ECDSAP256SHA256 -f KSK "$ZONE") || fail "dnssec-keygen"
bind_zsk=$K/$(dnssec-keygen -q -a ED25519 "$ZONE") || fail "dnssec-keygen"
bind_zsk13=$K/$(dnssec-keygen -q -a ECDSAP256SHA256 "$ZONE") || fail "dnssec-keygen"
ldns_key=$K/$(ldns-keygen -a ED25519 -k "$ZONE") || fail "ldns-keygen"
cd - > /dev/null
# Each algorithm with a KSK and a ZSK (RFC 4035 2.2); without BIND's ECDSA ZSK, ECDSA would sign no answer.
config "$bind_ksk" "$bind_zsk" "$ldns_key" > "$WORK/mixed.yaml"
out=$("$GLBD" check --config "$WORK/mixed.yaml" 2>&1) && fail "a KSK of an algorithm without a ZSK of it was accepted"
has "$out" "zones[0].dnssec.keys: algorithm ECDSAP256SHA256 would sign no answer"
config "$bind_ksk" "$bind_zsk" "$bind_zsk13" "$ldns_key" > "$WORK/others.yaml"
"$GLBD" check --config "$WORK/others.yaml" > /dev/null || fail "glbd check refused BIND's or ldns's keys"
"$GLBD" ds "$ZONE" --config "$WORK/others.yaml" > "$WORK/ds2.glbd" || fail "glbd ds"
for k in "$bind_ksk" "$ldns_key"; do dnssec-dsfromkey -2 "$k.key"; done > "$WORK/ds2.bind"
[[ $(norm_ds < "$WORK/ds2.glbd") == "$(norm_ds < "$WORK/ds2.bind")" ]] ||
    fail "the DS of BIND's and ldns's KSKs differ: $(cat "$WORK/ds2.glbd") / $(cat "$WORK/ds2.bind")"

# Refused: an algorithm glbd does not sign with, a private key open to every user, a missing pair.
rsa=$K/$(cd "$K" && dnssec-keygen -q -a RSASHA256 -b 2048 -f KSK "$ZONE")
config "$rsa" > "$WORK/rsa.yaml"
out=$("$GLBD" check --config "$WORK/rsa.yaml" 2>&1) && fail "an RSA key was accepted"
has "$out" "rsa.yaml:8:11: zones[0].dnssec.keys[0]: $rsa.key: algorithm 8 is not one glbd signs with"
chmod 0644 "$ecdsa.private"
config "$ecdsa" > "$WORK/open.yaml"
out=$("$GLBD" check --config "$WORK/open.yaml" 2>&1) && fail "a world-readable private key was accepted"
has "$out" "zones[0].dnssec.keys[0]: $ecdsa.private: a private key must not be open to every user (mode 0644)"
[[ $out != *"$(sed -n 's/^PrivateKey: //p' "$ecdsa.private")"* ]] || fail "the private key was printed"
out=$("$GLBD" ds "$ZONE" --config "$WORK/open.yaml" 2>&1) && fail "glbd ds printed a DS for a bad config"
config "$K/Kmissing" > "$WORK/missing.yaml"
out=$("$GLBD" check --config "$WORK/missing.yaml" 2>&1) && fail "a missing key was accepted"
has "$out" "cannot read $K/Kmissing.key: No such file or directory"
pass "glbd's keys read by BIND (DS equal, dnssec-signzone + dnssec-verify); BIND's and ldns's keys loaded; RSA, mode 0644, a missing pair and an algorithm that would sign no answer refused"
