#!/usr/bin/env bash
# A fleet's cold start: 12 servers, each its own cluster with the same 20 hosts, all started at once and
# listing each other. Every server learns every cluster, from about one report with data per other origin,
# and asks for everything a peer relays about once (its first round's lead): a pull of a peer's own origin that
# shows origins the puller does not know yet leaves them to their own members, or to a pull of everything
# two rounds later (take_relayed_news), instead of asking that peer for everything at once. A server's round
# also leads with a pull of everything while a member it lists is not up yet (still due), so the bound on those
# pulls grows with the spread of the start-ups: 12 sanitized servers on a busy CI machine came up over 1.5 s
# (three rounds), which a fixed bound of two each did not allow for. On an idle
# machine the old code passes too (its transfers end before they overlap); at 50 servers on 2 cores it
# took 2.6-3.2 reports per origin learnt, and now 1.2-1.3 (bench/sync-converge.sh). N and HOSTS may be set.
source "$(dirname "$0")/lib.sh"
N=${N:-12} P=5650 AP=9650 HOSTS=${HOSTS:-20} INTERVAL_MS=500
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
        peers_yaml --interval ${INTERVAL_MS}ms --dead 30s "${members[@]}"
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
# Each server's rounds before the last server was serving: a round leads with a pull of everything while a
# member is due, plus its first round's lead and the round that finds the last member up.
started_ms() { date -d "$(awk '/ glbd serving / {print $1; exit}' "$WORK/c$1.log")" +%s%3N; }
first= last=0 t=()
for ((i = 1; i <= N; i++)); do
    t[i]=$(started_ms "$i") || fail "server $i did not log its start"
    if ((t[i] > last)); then last=${t[i]}; fi
    if [[ -z $first ]] || ((t[i] < first)); then first=${t[i]}; fi
done
allowed=0
for ((i = 1; i <= N; i++)); do allowed=$((allowed + 2 + (last - t[i] + INTERVAL_MS - 1) / INTERVAL_MS)); done
spread=$((last - first))
need=$((N * (N - 1)))
((reports >= need)) || fail "$reports reports with data for $need origins learnt: fewer than one each"
((reports * 10 <= need * 15)) ||
    fail "$reports reports with data ($skipped of them held already) for $need origins learnt: more than 1.5 per origin"
((all <= allowed)) ||
    fail "$all pulls of everything a peer relays for $N servers started over $spread ms: more than the $allowed their rounds while a member was not up allow"
pass "$N servers started together: every one knows every cluster; $reports reports with data for $need origins learnt ($skipped held already); pulls of everything: $all (at most $allowed for a start spread over $spread ms), of a peer's own origin: $own"
