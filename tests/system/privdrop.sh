#!/usr/bin/env bash
# Started as root with `user: nobody`, glbd binds port 53 (privileged), gives its missing stateDir to
# nobody, then drops privileges before any thread starts: every thread runs as nobody's uid and gid with no
# supplementary groups, and the state file is written as nobody. An unknown user is a config error.
source "$(dirname "$0")/lib.sh"
(( $(id -u) == 0 )) || fail "this test starts glbd as root (CI runs as root)"
A=127.0.0.150
STATE_PARENT=$(mktemp -d /tmp/glbd-priv.XXXXXX)
chmod 755 "$STATE_PARENT"
EXIT_HOOKS+=("rm -rf '$STATE_PARENT'")
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: p}
listen: {dns: ["$A:53"]}
user: nobody
stateDir: $STATE_PARENT/state
zones: [{origin: priv.test, nameservers: [{name: ns.priv.test, addresses: [$A]}]}]
hosts:
  - {name: app.priv.test, endpoints: [192.0.2.1], healthCheck: {protocol: TCP, port: 9, interval: 1s, timeout: 200ms}}
YAML
start_glbd p "$WORK/glbd.yaml"
wait_for 20 q $A 53 priv.test SOA || fail "not answering on port 53"
grep -q "running as user nobody" "$WORK/p.log" || fail "drop not logged"
[[ $(status_of $A 53 priv.test SOA) == NOERROR ]] || fail "not answering after the drop"
uid=$(id -u nobody) gid=$(id -g nobody)
threads=0
for task in /proc/$PID_p/task/*; do
    t=${task##*/}
    [[ $(awk '/^Uid:/ {print $2, $3, $4, $5}' "$task/status") == "$uid $uid $uid $uid" ]] || fail "thread $t: $(grep ^Uid: "$task/status")"
    [[ $(awk '/^Gid:/ {print $2, $3, $4, $5}' "$task/status") == "$gid $gid $gid $gid" ]] || fail "thread $t: $(grep ^Gid: "$task/status")"
    [[ $(awk '/^Groups:/ {print $2}' "$task/status") == "" ]] || fail "thread $t keeps groups: $(grep ^Groups: "$task/status")"
    threads=$((threads + 1))
done
(( threads >= 4 )) || fail "only $threads threads: UDP, TCP, sync and health threads expected"
pass "bound port 53 as root; all $threads threads run as nobody (uid $uid, gid $gid), no supplementary groups"

wait_for 20 test -s "$STATE_PARENT/state/state.json" || fail "state.json not written under user nobody: $(ls -la "$STATE_PARENT"/state 2>&1)"
[[ $(stat -c %U "$STATE_PARENT/state") == nobody ]] || fail "stateDir owned by $(stat -c %U "$STATE_PARENT/state"), want nobody"
[[ $(stat -c %U "$STATE_PARENT/state/state.json") == nobody ]] || fail "state.json owned by $(stat -c %U "$STATE_PARENT/state/state.json")"
pass "the missing stateDir was given to nobody and state.json written as nobody"

# An unknown user is a bad config: exit 1, with the key located.
sed 's/^user: nobody/user: no-such-user-glbd/' "$WORK/glbd.yaml" > "$WORK/bad.yaml"
rc=0; "$GLBD" check --config "$WORK/bad.yaml" 2>"$WORK/bad.err" || rc=$?
(( rc == 1 )) || fail "check of an unknown user exited $rc, want 1"
grep -q 'bad.yaml:[0-9]*:[0-9]*: user: no such user "no-such-user-glbd"' "$WORK/bad.err" || fail "unknown user not located: $(cat "$WORK/bad.err")"
pass "an unknown user is refused with its location (exit 1)"
