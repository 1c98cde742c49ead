#!/usr/bin/env bash
# Started as root with `user: nobody`, glbd binds port 53 (privileged) and then runs as nobody.
source "$(dirname "$0")/lib.sh"
(( $(id -u) == 0 )) || fail "this test starts glbd as root (CI runs as root)"
A=127.0.0.150
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: p}
listen: {dns: ["$A:53"]}
user: nobody
zones: [{origin: priv.test, nameservers: [{name: ns.priv.test, addresses: [$A]}]}]
YAML
start_glbd p "$WORK/glbd.yaml"
wait_for 10 q $A 53 priv.test SOA || fail "not answering on port 53"
uid=$(awk '/^Uid:/ {print $2, $3, $4, $5}' /proc/$PID_p/status)
[[ $uid == "$(id -u nobody) $(id -u nobody) $(id -u nobody) $(id -u nobody)" ]] || fail "uids after the drop: $uid"
grep -q "running as user nobody" "$WORK/p.log" || fail "drop not logged"
[[ $(status_of $A 53 priv.test SOA) == NOERROR ]] || fail "not answering after the drop"
pass "bound port 53 as root, then runs as nobody (uid $(id -u nobody)) and answers"
