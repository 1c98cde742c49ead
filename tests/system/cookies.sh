#!/usr/bin/env bash
# Response rate limiting is on by default (200 responses a second per /24 and kind of response, slip 2),
# and a client that returns a valid DNS server cookie (RFC 7873/9018) is not limited: it has proved its
# address. dig's +cookie sees its server cookie reported good. Two replicas with one listen.cookieSecretFile
# take each other's cookies; without it, they do not.
source "$(dirname "$0")/lib.sh"
A=127.0.0.185 P=5485
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: k}
listen: {dns: ["$A:$P"]}
threads: 1
zones:
  - origin: cookie.test
    nameservers: [{name: ns1.cookie.test, addresses: [$A]}]
    records: |
      www IN A 192.0.2.10
YAML
start_glbd k "$WORK/glbd.yaml"
wait_for 10 q $A $P www.cookie.test A || fail "server did not come up"

# 1,000 queries in about a second without cookies: about 200 a second answered in full.
read -r full tc none secs < <("$DNSCLIENT" burst $A $P 127.0.8.10 1000 www.cookie.test | sed 's/[a-z_]*=//g')
(( full >= 100 && full <= 200 * (secs + 1) + 10 )) || fail "default RRL: $full full answers of 1000 over $secs s"
(( tc + none >= 1000 - 200 * (secs + 1) - 10 )) || fail "default RRL limited only $((tc + none)) of 1000"
pass "RRL on by default: $full of 1000 in full over $secs s, $tc truncated, $none dropped"

# The same from another /24 with a valid server cookie: every answer in full, more than the limit allows.
read -r full tc none secs < <("$DNSCLIENT" burst $A $P 127.0.9.10 600 www.cookie.test cookie | sed 's/[a-z_]*=//g')
(( full == 600 && full > 200 * secs )) || fail "with a valid cookie: $full full, $tc truncated, $none missing of 600 over $secs s"
pass "with a valid server cookie: 600 of 600 in full over $secs s (the limit: 200 a second)"

# dig: the first answer carries a server cookie; sent back, it is good.
out=$(dig @$A -p $P +cookie www.cookie.test A -b 127.0.10.1)
grep -q "; COOKIE: [0-9a-f]\{16\}[0-9a-f]\{32\}" <<<"$out" || fail "no server cookie in the answer: $out"
cookie=$(sed -n 's/^; COOKIE: \([0-9a-f]*\).*/\1/p' <<<"$out")
out=$(dig @$A -p $P +cookie="$cookie" www.cookie.test A -b 127.0.10.1)
grep -q "; COOKIE: .* (good)" <<<"$out" || fail "dig does not see a good cookie: $(grep COOKIE <<<"$out")"
pass "dig +cookie: server cookie returned and reported good"
stop_glbd k

# Two replicas (B and C) sharing listen.cookieSecretFile: a cookie B made is valid at C, so a client that moves
# between them keeps its exemption. C without the file: the same cookie is not valid there.
B=127.0.0.186 C=127.0.0.187
(umask 077 && head -c 16 /dev/urandom | base64 > "$WORK/cookie.secret")  # a secret: glbd refuses it open to all
replica() {  # NAME ADDRESS [shared]
    cat > "$WORK/$1.yaml" <<YAML
cluster: {id: k, instance: $1}
listen: {dns: ["$2:$P"]${3:+, cookieSecretFile: $WORK/cookie.secret}}
threads: 1
zones:
  - origin: cookie.test
    nameservers: [{name: ns1.cookie.test, addresses: [$2]}]
    records: |
      www IN A 192.0.2.10
YAML
}
replica b $B shared
replica c $C shared
start_glbd b "$WORK/b.yaml"
start_glbd c "$WORK/c.yaml"
wait_for 10 q $C $P www.cookie.test A || fail "replica c did not come up"
read -r full tc none secs < <("$DNSCLIENT" burst $C $P 127.0.11.10 600 www.cookie.test cookie-from=$B | sed 's/[a-z_]*=//g')
(( full == 600 )) || fail "a cookie of replica b at replica c (shared secret): $full full, $tc truncated, $none missing of 600"
stop_glbd c
replica c $C
start_glbd c "$WORK/c.yaml"
wait_for 10 q $C $P www.cookie.test A || fail "replica c did not come back"
read -r full tc none secs < <("$DNSCLIENT" burst $C $P 127.0.12.10 1000 www.cookie.test cookie-from=$B | sed 's/[a-z_]*=//g')
(( full <= 200 * (secs + 1) + 10 )) || fail "replica c without the shared secret took b's cookie: $full of 1000 in full"
pass "cookieSecretFile shared by two replicas: b's cookie valid at c (600 of 600 in full); without it, limited ($full of 1000)"
stop_glbd b
stop_glbd c
