#!/usr/bin/env bash
# A change crosses a link that loses SYNs without waiting for TCP's one-second retransmission: two peers in a
# network namespace of the test's own, where iptables drops every other SYN between them (the statistic
# match, nth mode: each connection's first SYN or its next is lost). Linux sends a lost SYN again only after
# a second, so a NOTIFY and the pull it sets off each took 1 s when their SYN was the one dropped; an
# exchange now opens a second connection when the first has not opened within max(200 ms, 3 x the usual
# time) and goes on with whichever opens first, and a change goes out by heartbeats over UDP (a peer whose
# beats come gets no NOTIFY over TCP), so only the pull needs a connection. syncInterval is 30 s: what
# moves, the beat and the pull it sets off moved. Ten overrides on a, each timed until b's answer changes:
# the median must be under 700 ms (measured: 253 ms; 459 ms with the second connection and the NOTIFY over
# TCP; 2.1 s before either), and b's metrics (b pulls) show the second connections and the connect time.
source "$(dirname "$0")/netns.sh"
P=5550 ADMIN=127.0.23.50:9550 ADMIN_B=127.0.23.51:9550
A=127.0.23.50 B=127.0.23.51
iptables -A OUTPUT -p tcp --syn -s 127.0.23.50/31 -d 127.0.23.50/31 -m statistic --mode nth --every 2 --packet 0 \
    -j DROP 2>"$WORK/iptables.err" || { echo "skip: iptables cannot drop SYNs here: $(cat "$WORK/iptables.err")"; exit 77; }
for n in a b; do
    addr=$A ip=192.0.2.1
    [[ $n == b ]] && addr=$B ip=192.0.2.2
    cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["$addr:$P"]}
admin: {listen: "$([[ $n == a ]] && echo "$ADMIN" || echo "$ADMIN_B")"}
zones: [{origin: loss.test, nameservers: [{name: ns.loss.test, addresses: [$A]}]}]
hosts:
  - {name: app.loss.test, endpoints: [$ip]}
$(peers_yaml --interval 30s --dead 120s "$A:$P" "$B:$P")
YAML
done
start_glbd a "$WORK/a.yaml"
start_glbd b "$WORK/b.yaml"
b_sees() { [[ $(dig @$B -p $P +short app.loss.test A | sort | tr '\n' ' ') == "$1" ]]; }
wait_for 30 b_sees "192.0.2.1 192.0.2.2 " || fail "b never learnt a (SYNs lost every other time)"
times=()
for i in $(seq 1 10); do
    if ((i % 2)); then state=down want="192.0.2.2 "; else state=auto want="192.0.2.1 192.0.2.2 "; fi
    t0=$(now_ms)
    curl -sf --interface 127.0.0.1 -o /dev/null -X PUT -d "{\"target\":\"a/192.0.2.1\",\"state\":\"$state\"}" "http://$ADMIN/v1/overrides" ||
        fail "override refused"
    for ((k = 0; k < 1000; k++)); do b_sees "$want" && break; sleep 0.01; done
    b_sees "$want" || fail "b did not take a's override ($state) within 10 s"
    times+=($(( $(now_ms) - t0 )))
done
median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 5p)
echo "a change reached b after (ms): ${times[*]}; median $median"
((median < 700)) || fail "a change took a median of $median ms to cross (a lost SYN waited for its retransmission)"
# b made the pulls (a's only connections to b are its first ones, and both of their SYNs may be lost when
# b's interleave, so a may have no connect time to show).
metrics=$(curl -sf --interface 127.0.0.1 "http://$ADMIN_B/metrics")
second=$(awk -v p="glbd_sync_second_connects_total{peer=\"$A:$P\"}" '$1 == p {print $2}' <<<"$metrics")
connect=$(awk -v p="glbd_sync_peer_connect_seconds{peer=\"$A:$P\"}" '$1 == p {print $2}' <<<"$metrics")
[[ -n $second && $second -gt 0 ]] || fail "no second connections in b's metrics: '$second'"
# The connect time counts only attempts whose SYN was not sent again: on loopback, well under the 200 ms
# after which a second attempt starts.
awk -v c="$connect" 'BEGIN { exit !(c != "" && c >= 0 && c < 0.2) }' || fail "b's connect time to a is not a round trip: '$connect'"
pass "a change crossed a link losing every other SYN in a median of $median ms; b opened a second connection $second times; connect time ${connect} s"
