#!/usr/bin/env bash
# A reload that changes the peers or the key takes effect without a restart: a member added by a reload is
# pulled from (and what it knows is relayed on); a key changed on one side only makes both sides refuse each
# other (logged), and changing it on the other side too brings them back together.
source "$(dirname "$0")/lib.sh"
P=5480
declare -A ADDR=([a]=127.0.0.171 [b]=127.0.0.172 [c]=127.0.0.173)
declare -A IP=([a]=192.0.2.171 [b]=192.0.2.172 [c]=192.0.2.173)
K1=$TSIG_SECRET K2=$(head -c 32 /dev/urandom | base64)
config() {  # NAME KEY MEMBERS... [ENDPOINT]
    local n=$1 key=$2 ep=${IP[$1]}; shift 2
    local members=() m
    for m in "$@"; do members+=("${ADDR[$m]}:$P"); done
    cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["${ADDR[$n]}:$P"]}
zones: [{origin: rp.test, nameservers: [{name: ns.rp.test, addresses: [${ADDR[a]}]}]}]
hosts:
  - {name: $n.rp.test, endpoints: [${EP_OVERRIDE:-$ep}]}
$(peers_yaml --secret "$key" --interval 500ms --dead 30s "${members[@]}")
YAML
}
sees() {  # SERVER NAME WANT
    [[ $(dig @${ADDR[$1]} -p $P +short $2.rp.test A) == "$3" ]]
}
config a "$K1" a b
config b "$K1" a b
config c "$K1" c
for n in a b c; do start_glbd $n "$WORK/$n.yaml"; done
wait_for 20 sees a b ${IP[b]} || fail "a and b never synced"
wait_for 20 sees b a ${IP[a]} || fail "b and a never synced"
sees a c ${IP[c]} && fail "a knows c before c is a member"
pass "a and b synced; c is unknown to them"

# a gains c as a member: a pulls from c, and b learns c through a.
config a "$K1" a b c
kill -HUP "$PID_a"
wait_for 20 sees a c ${IP[c]} || fail "a did not pull from the member its reload added"
wait_for 20 sees b c ${IP[c]} || fail "b did not learn c through a"
pass "a reload added member c: a pulls from it, b learns it through a"

# The key changes on a only: a and b refuse each other, and say so.
config a "$K2" a b c
kill -HUP "$PID_a"
wait_for 20 grep -q "rejected .* request from .*: bad signature" "$WORK/b.log" || fail "b did not refuse a's new key"
wait_for 20 grep -q "rejected .* request from .*: bad signature" "$WORK/a.log" || fail "a did not refuse b's old key"
EP_OVERRIDE=192.0.2.199 config a "$K2" a b c
kill -HUP "$PID_a"
wait_for 20 sees a a 192.0.2.199 || fail "a's own reload not answered"
sleep 2  # four sync rounds: the change must not reach b while the keys differ
sees b a ${IP[a]} || fail "b took a's change although their keys differ: $(dig @${ADDR[b]} -p $P +short a.rp.test A)"
pass "a key changed on one side only: both refuse (logged), nothing flows"

# b takes the new key too: a's change reaches it.
config b "$K2" a b
kill -HUP "$PID_b"
wait_for 20 sees b a 192.0.2.199 || fail "b did not get a's change after both reloaded the same key"
pass "the same new key on both sides: a's change reached b"
