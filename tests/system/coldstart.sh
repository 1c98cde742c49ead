#!/usr/bin/env bash
# A fleet's cold start: 12 servers, each its own cluster with the same 20 hosts, all started at once and
# listing each other. Every server learns every cluster, from about one report with data per other origin,
# and asks for everything a peer relays about once (its first round's lead): a pull of a peer's own origin that
# shows origins the puller does not know yet leaves them to their own members, or to a pull of everything
# two rounds later (take_relayed_news), instead of asking that peer for everything at once. On an idle
# machine the old code passes too (its transfers end before they overlap); at 50 servers on 2 cores it
# took 2.6-3.2 reports per origin learnt, and now 1.2-1.3 (bench/sync-converge.sh). N and HOSTS may be set.
source "$(dirname "$0")/lib.sh"
N=${N:-12} P=5650 AP=9650 HOSTS=${HOSTS:-20}
addr() { echo "127.0.23.$((149 + $1))"; }
members=()
for ((i = 1; i <= N; i++)); do members+=("$(addr $i):$P"); done
for ((i = 1; i <= N; i++)); do
    {
        echo "cluster: {id: c$i, instance: c$i-0}"
        echo "listen: {dns: [\"$(addr $i):$P\"]}"
        echo "admin: {listen: \"$(addr $i):$AP\"}"
        echo "threads: 1"
        echo "zones: [{origin: cold.test, nameservers: [{name: ns.cold.test, addresses: [$(addr 1)]}]}]"
        echo "hosts:"
        for ((h = 0; h < HOSTS; h++)); do echo "  - {name: h$h.cold.test, endpoints: [10.$i.$((h / 250)).$((h % 250 + 1))]}"; done
        peers_yaml --interval 500ms --dead 30s "${members[@]}"
    } > "$WORK/c$i.yaml"
done
for ((i = 1; i <= N; i++)); do start_glbd "c$i" "$WORK/c$i.yaml"; done
knows_all() {  # every server answers the last host with every cluster's endpoint
    local i
    for ((i = 1; i <= N; i++)); do
        [[ $(dig @"$(addr $i)" -p $P +short +tries=1 +time=1 "h$((HOSTS - 1)).cold.test" A | wc -l) == "$N" ]] || return 1
    done
}
wait_for 60 knows_all || fail "the fleet did not converge in 60 s"
sleep 1  # the pulls under way when the last answer came have ended
reports=0 skipped=0 all=0 own=0
for ((i = 1; i <= N; i++)); do
    m=$(curl -sf "http://$(addr $i):$AP/metrics") || fail "no metrics from server $i"
    reports=$((reports + $(awk '/^glbd_sync_reports_received_total / {print int($2)}' <<<"$m")))
    skipped=$((skipped + $(awk '/^glbd_sync_reports_skipped_total / {print int($2)}' <<<"$m")))
    all=$((all + $(awk '/^glbd_sync_pulls_total\{scope="all"\} / {print int($2)}' <<<"$m")))
    own=$((own + $(awk '/^glbd_sync_pulls_total\{scope="own"\} / {print int($2)}' <<<"$m")))
done
need=$((N * (N - 1)))
((reports >= need)) || fail "$reports reports with data for $need origins learnt: fewer than one each"
((reports * 10 <= need * 15)) ||
    fail "$reports reports with data ($skipped of them held already) for $need origins learnt: more than 1.5 per origin"
((all <= 2 * N)) || fail "$all pulls of everything a peer relays for $N servers: more than two each"
pass "$N servers started together: every one knows every cluster; $reports reports with data for $need origins learnt ($skipped held already); pulls of everything: $all, of a peer's own origin: $own"
