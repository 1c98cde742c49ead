# Sourced first (in place of lib.sh) by a test that runs in a network namespace of its own, where it may cut
# and slow links with iptables without touching the machine's: re-executes the test under `unshare --net`
# (root), sources lib.sh, brings loopback up and skips (exit 77) where iptables cannot run. Only loopback
# exists in the namespace: nothing a test sends there can leave it.
if [[ -z ${GLBD_IN_NET_NS:-} ]]; then
    exec unshare --net env GLBD_IN_NET_NS=1 bash "$0" "$@"
fi
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ip link set lo up || fail "cannot bring up loopback in the test's network namespace"
command -v iptables >/dev/null || { echo "skip: iptables is not installed (Debian: apt-get install iptables)"; exit 77; }
iptables -L OUTPUT >/dev/null 2>"$WORK/iptables.err" || { echo "skip: no iptables here: $(cat "$WORK/iptables.err")"; exit 77; }
