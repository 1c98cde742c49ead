#!/usr/bin/env bash
# A sync transfer large enough to take many messages, read by dig and kdig with the key: each verifies the
# TSIG of every message (RFC 8945 5.3.1 chaining) and must see every host. Also over IPv6. And the requests
# glbd sends as a peer (NOTIFY, IXFR) verify with ldns at a fake peer (dnsclient catch).
source "$(dirname "$0")/lib.sh"
A=127.0.0.160 P=5460 PEER=127.0.0.161
"$DNSCLIENT" catch $PEER $P 20 glb-sync. "$TSIG_SECRET" > "$WORK/catch.out" 2>&1 &
catcher=$!
PIDS+=("$catcher")
wait_for 10 bash -c "ss -Hltn | grep -q '$PEER:$P '" || fail "the fake peer is not listening"
python3 - "$WORK/glbd.yaml" "$A" "$P" "$TSIG_SECRET" "$PEER" <<'PY'
import sys
path, addr, port, secret, peer = sys.argv[1:]
with open(path, "w") as f:
    f.write(f"""cluster: {{id: big, instance: big-0}}
listen: {{dns: ["{addr}:{port}", "[::1]:{port}"]}}
zones: [{{origin: xfr.test, nameservers: [{{name: ns.xfr.test, addresses: [{addr}]}}]}}]
peers:
  key: {{name: glb-sync, secret: "{secret}"}}
  members: [{{address: "{peer}:{port}"}}]
  syncInterval: 300ms
hosts:
""")
    for i in range(3000):
        f.write(f"  - {{name: h{i}.xfr.test, endpoints: [192.0.2.{i % 250 + 1}, \"2001:db8::{i + 1:x}\"], "
                f"loadBalancing: {{weight: {i % 100 + 1}, geo: IE}}}}\n")
PY
start_glbd big "$WORK/glbd.yaml"
wait_for 30 q $A $P h2999.xfr.test A || fail "server did not come up"

for server in $A ::1; do
    dig -y hmac-sha256:glb-sync:$TSIG_SECRET @$server -p $P _glbd. AXFR +time=5 +tries=1 > "$WORK/dig.out" 2>&1 || true
    ! grep -qiE 'failed|verify|BADSIG|BADKEY|BADTIME|couldn' "$WORK/dig.out" || fail "dig ($server): $(grep -iE 'failed|verify|BAD|couldn' "$WORK/dig.out" | head -3)"
    msgs=$(sed -n 's/.*XFR size: [0-9]* records (messages \([0-9]*\),.*/\1/p' "$WORK/dig.out")
    (( ${msgs:-0} >= 4 )) || fail "dig ($server): $msgs messages, want several: $(tail -3 "$WORK/dig.out")"
    hosts=$(grep -c '"host=h[0-9]*.xfr.test"' "$WORK/dig.out")
    (( hosts == 3000 )) || fail "dig ($server): $hosts of 3000 hosts"
    pass "dig ($server) verified a transfer of $msgs messages with all 3000 hosts"
done

kdig -y hmac-sha256:glb-sync:$TSIG_SECRET @$A -p $P _glbd. AXFR > "$WORK/kdig.out" 2>&1 || fail "kdig: $(tail -3 "$WORK/kdig.out")"
! grep -qE ';; (ERROR|WARNING)|[Ff]ailed|BADSIG|BADKEY|BADTIME' "$WORK/kdig.out" || fail "kdig: $(grep -E ';; (ERROR|WARNING)|[Ff]ailed|BAD' "$WORK/kdig.out" | head -3)"
kmsgs=$(sed -n 's/.*(\([0-9]*\) messages, [0-9]* records).*/\1/p' "$WORK/kdig.out")
(( ${kmsgs:-0} >= 4 )) || fail "kdig: '$kmsgs' messages: $(tail -3 "$WORK/kdig.out")"
khosts=$(grep -c '"host=h[0-9]*.xfr.test"' "$WORK/kdig.out")
(( khosts == 3000 )) || fail "kdig: $khosts of 3000 hosts"
pass "kdig verified a transfer of $kmsgs messages with all 3000 hosts"

wait $catcher || fail "glbd's requests did not verify at the fake peer: $(cat "$WORK/catch.out")"
grep -q "opcode=4 qtype=6 tsig=ok" "$WORK/catch.out" || fail "no verified NOTIFY: $(cat "$WORK/catch.out")"
grep -q "opcode=0 qtype=251 tsig=ok" "$WORK/catch.out" || fail "no verified IXFR: $(cat "$WORK/catch.out")"
! grep -q "tsig=BAD" "$WORK/catch.out" || fail "a request failed verification: $(cat "$WORK/catch.out")"
pass "glbd's NOTIFY and IXFR requests verify with ldns at a fake peer"

# With an OpenSSL that cannot compute HMAC-SHA256 (only the null provider), every MAC would be empty: glbd
# refuses to start instead of accepting empty MACs.
printf 'openssl_conf = init\n[init]\nproviders = prov\n[prov]\nnull = null_sect\n[null_sect]\nactivate = 1\n' > "$WORK/null.cnf"
sed "s/$A:$P/127.0.0.162:$P/; s/\\[::1\\]:$P/[::1]:$((P + 1))/" "$WORK/glbd.yaml" > "$WORK/nohmac.yaml"
rc=0; OPENSSL_CONF="$WORK/null.cnf" timeout 20 "$GLBD" serve --config "$WORK/nohmac.yaml" > "$WORK/nohmac.out" 2>&1 || rc=$?
(( rc == 2 )) || fail "glbd started (exit $rc) although HMAC does not work: $(tail -2 "$WORK/nohmac.out")"
grep -q "HMAC-SHA256 does not work" "$WORK/nohmac.out" || fail "no clear error: $(tail -2 "$WORK/nohmac.out")"
pass "without a working HMAC-SHA256, glbd refuses to start (exit 2)"

# A wrong key fails at the first message.
dig -y hmac-sha256:glb-sync:$(head -c 32 /dev/urandom | base64) @$A -p $P _glbd. AXFR +time=5 +tries=1 | contains "Transfer failed" || fail "wrong key accepted"
