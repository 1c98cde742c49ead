# Shared helpers for system tests: start the real glbd on a loopback address, query it with dig/kdig,
# wait for events with a deadline. Each test script uses its own addresses and ports.
set -euo pipefail

: "${GLBD:?GLBD must point to the glbd binary}"
: "${DNSCLIENT:=}"
: "${FIXTURES:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures" && pwd)}"
WORK=$(mktemp -d -t glbd-sys.XXXXXX)
# Every dig of a test sends no EDNS cookie: a fresh cookie per dig process would make every question's bytes
# new, so glbd's UDP answer cache would never be hit. Without it, a question repeated across a health flip,
# a peer's update or an override is answered from the cache unless the cache is invalidated correctly.
export HOME="$WORK"
echo "+nocookie" > "$WORK/.digrc"
# Debian's python3 comes first in PATH (for the scripts' children too): it is the one .ci/deps gives
# python3-yaml, and it starts in 40 ms where a version manager's shim (pyenv's) takes 300 ms, which a test
# that checks 60 answers with Python turns into 20 s.
if [[ -x /usr/bin/python3 ]]; then
    mkdir -p "$WORK/bin" && ln -s /usr/bin/python3 "$WORK/bin/python3" && PATH="$WORK/bin:$PATH"
fi
declare -a PIDS=()         # every background process of the test (glbd, targets, proxies)
declare -A GLBD_PIDS=()    # name -> pid of each glbd still expected to be running
declare -a GLBD_LOGS=()    # the log of every glbd started, checked for sanitizer reports at the end
declare -a EXIT_HOOKS=()   # commands run at the end, after every process has stopped (tests never set traps)

# sanitizer_report LOG: prints the first sanitizer line of LOG, if any.
sanitizer_report() {
    grep -m1 -E 'AddressSanitizer|LeakSanitizer|ThreadSanitizer|UndefinedBehaviorSanitizer|runtime error:' "$1" 2>/dev/null
}

cleanup() {
    local rc=$? p name problems=""
    # Every glbd still running is stopped gracefully: it must exit 0.
    for name in "${!GLBD_PIDS[@]}"; do kill -TERM "${GLBD_PIDS[$name]}" 2>/dev/null || true; done
    for name in "${!GLBD_PIDS[@]}"; do
        p=${GLBD_PIDS[$name]}
        if wait "$p" 2>/dev/null; then :; else
            local code=$?
            problems+="glbd $name exited $code after SIGTERM"$'\n'
        fi
    done
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
    local log line
    for log in "${GLBD_LOGS[@]}"; do
        line=$(sanitizer_report "$log") && problems+="$(basename "$log"): $line"$'\n'
    done
    for p in "${EXIT_HOOKS[@]}"; do eval "$p" || true; done
    if [[ -n $problems ]]; then
        echo "FAIL: at the end of the test:" >&2
        printf '%s' "$problems" >&2
        for log in "${GLBD_LOGS[@]}"; do echo "--- $log" >&2; tail -n 40 "$log" >&2; done
        rc=1
    fi
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    local f
    for f in "$WORK"/*.log; do [[ -e $f ]] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }; done
    exit 1
}
pass() { echo "ok: $*"; }

# port_free ADDR PORT: nothing listens on ADDR:PORT over UDP or TCP (a leftover server would otherwise
# answer in this test's place).
port_free() {
    local addr=$1 port=$2 a=$1
    [[ $addr == *:* ]] && a="[$addr]"
    ! ss -Hlnut "( sport = :$port )" 2>/dev/null | awk '{print $5}' | grep -qxF "$a:$port"
}

# listen_addresses CONFIG: the "ADDR PORT" pairs of listen.dns in a test config (flow or block style).
listen_addresses() {
    python3 -c '
import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
for a in (c.get("listen") or {}).get("dns", []):
    host, _, port = a.rpartition(":")
    print(host.strip("[]"), port)' "$1"
}

# start_glbd NAME CONFIG -> sets PID_<NAME>; logs to $WORK/NAME.log. Its ports must be free.
start_glbd() {
    local name=$1 config=$2 addr port
    while read -r addr port; do
        [[ -n $addr ]] || continue
        port_free "$addr" "$port" || fail "$addr:$port is already in use before glbd $name starts (a leftover server?)"
    done < <(listen_addresses "$config")
    : >"$WORK/$name.log"
    "$GLBD" serve --config "$config" >>"$WORK/$name.log" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    GLBD_PIDS[$name]=$pid
    GLBD_LOGS+=("$WORK/$name.log")
    printf -v "PID_$name" '%s' "$pid"
}

# stop_glbd NAME: SIGTERM; it must exit 0 with no sanitizer report in its log.
stop_glbd() {
    local name=$1 pid=${GLBD_PIDS[$1]:?no running glbd named $1} rc=0
    kill -TERM "$pid"
    wait "$pid" || rc=$?
    unset "GLBD_PIDS[$name]"
    (( rc == 0 )) || fail "glbd $name exited $rc after SIGTERM"
    local line
    line=$(sanitizer_report "$WORK/$name.log") && fail "glbd $name: $line"
    return 0
}

# kill9_glbd NAME: kill -9 on purpose (a crash); its exit is not checked, its log still is at the end.
kill9_glbd() {
    local name=$1 pid=${GLBD_PIDS[$1]:?no running glbd named $1}
    kill -KILL "$pid"
    wait "$pid" 2>/dev/null || true
    unset "GLBD_PIDS[$name]"
}

# wait_for DEADLINE_SECONDS COMMAND...: polls every 50 ms until COMMAND succeeds.
wait_for() {
    local deadline=$1; shift
    local end=$(( $(date +%s%N) + deadline * 1000000000 ))
    while (( $(date +%s%N) < end )); do
        if "$@" >/dev/null 2>&1; then return 0; fi
        sleep 0.05
    done
    return 1
}

# start_nsd NAME PORT ZONE ZONEFILE ADDRESS...: NSD (Debian's) serving ZONE from ZONEFILE on each ADDRESS:PORT,
# in $WORK/NAME; returns once the first answers the zone's SOA with authority. SIGHUP to its pid ($NSD_PID)
# reloads a changed zone file.
start_nsd() {
    local name=$1 port=$2 zone=$3 file=$4 addr listen=""
    shift 4
    for addr in "$@"; do
        port_free "$addr" "$port" || fail "$addr:$port is already in use before $name starts (a leftover server?)"
        listen+="    ip-address: $addr@$port"$'\n'
    done
    mkdir -p "$WORK/$name"
    cat > "$WORK/$name/nsd.conf" <<CONF
server:
${listen}    port: $port
    username: ""
    chroot: ""
    zonesdir: "$(dirname "$file")"
    pidfile: "$WORK/$name/nsd.pid"
    database: ""
    zonelistfile: "$WORK/$name/zone.list"
    xfrdfile: "$WORK/$name/xfrd.state"
    xfrdir: "$WORK/$name"
    logfile: "$WORK/$name/nsd.log"
    server-count: 1
    verbosity: 1
remote-control:
    control-enable: no
zone:
    name: $zone
    zonefile: "$file"
CONF
    nsd-checkconf "$WORK/$name/nsd.conf" || fail "nsd-checkconf $name"
    nsd -d -c "$WORK/$name/nsd.conf" >> "$WORK/$name/nsd.out" 2>&1 &
    NSD_PID=$!
    PIDS+=("$NSD_PID")
    nsd_serves() { dig +norec +tries=1 +time=1 @"$1" -p "$port" "$zone" SOA | grep -q "flags: qr aa"; }
    wait_for 30 nsd_serves "$1" ||
        fail "$name does not serve $zone within 30 s: $(cat "$WORK/$name/nsd.log" "$WORK/$name/nsd.out")"
}

# key_tag PATH: the key tag of a BIND-format pair, from its name (K<zone>.+<alg>+<tag>).
key_tag() { basename "$1" | sed -E 's/.*\+0*([0-9]+)$/\1/'; }

# dnskey_tags ADDR PORT ZONE: the tags of the DNSKEY set the server publishes, ascending, space separated.
dnskey_tags() {
    dig +norec +multi @"$1" -p "$2" "$3" DNSKEY | grep -oE "key id = [0-9]+" | awk '{print $4}' | sort -n | xargs
}

# reload_verdict NAME: SIGHUP to glbd NAME; prints the verdict on it, the first "reloaded" or "reload
# refused/failed" line of its log after those before the signal (other lines, a key mismatch seen by sync,
# may come after it).
reload_verdict() {
    local log=$WORK/$1.log before
    before=$(grep -cE "reloaded |reload (refused|failed)" "$log")
    kill -HUP "${GLBD_PIDS[$1]}"
    wait_for 20 bash -c "(( \$(grep -cE 'reloaded |reload (refused|failed)' '$log') > $before ))" ||
        fail "glbd $1 neither reloaded nor refused within 20 s"
    grep -E "reloaded |reload (refused|failed)" "$log" | sed -n "$((before + 1))p"
}

# q ADDR PORT ARGS... : dig with short timeouts, no retries, no recursion wanted
q() {
    local addr=$1 port=$2; shift 2
    dig @"$addr" -p "$port" +norec +time=2 +tries=1 "$@"
}
# denials_validated LABEL RESOLVE...: through a validating resolver (RESOLVE... NAME TYPE prints dig's answer),
# a name that does not exist and two NODATA in $ZONE (a host's AAAA, the apex's TXT) come back NOERROR or
# NXDOMAIN with AD and no answer.
denials_validated() {
    local label=$1 nt name type out
    shift
    for nt in "nope.$ZONE A" "shop.$ZONE AAAA" "$ZONE TXT"; do
        read -r name type <<< "$nt"
        out=$("$@" "$name" "$type")
        grep -Eq "status: (NOERROR|NXDOMAIN)" <<< "$out" && grep -q "flags:.* ad" <<< "$out" ||
            fail "$label $name $type: no AD: $out"
        grep -q "ANSWER: 0," <<< "$out" || fail "$label $name $type: an answer: $out"
    done
}
# answers ADDR PORT NAME TYPE [dig args]: the rdata of the answer, one per line, sorted
answers() {
    local addr=$1 port=$2 name=$3 type=$4; shift 4
    q "$addr" "$port" "$name" "$type" +short "$@" | sort
}
status_of() {  # the rcode word of a response
    q "$@" | sed -n 's/.*status: \([A-Z]*\).*/\1/p'
}
# CMD | contains PATTERN: reads all of its input (grep -q would leave the writer to die of SIGPIPE
# under pipefail) and succeeds when a line matches.
contains() {
    local all
    all=$(cat)
    grep -q -- "$1" <<<"$all"
}

# now_ms: wall clock in milliseconds
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# metric NAME [ADMIN]: the value of the series NAME (with its labels, as /metrics writes them) at the admin
# endpoint ADMIN (host:port; default $ADMIN); empty when there is none.
metric() { curl -s --interface 127.0.0.1 "http://${2:-$ADMIN}/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# start_target NAME ADDR:PORT: an HTTP health target (tests/tools/targets.py); sets PID_<NAME>
start_target() {
    python3 "$(dirname "${BASH_SOURCE[0]}")/../tools/targets.py" --http "$2" --ready "$WORK/$1.ready" >"$WORK/$1.target" 2>&1 &
    local pid=$!
    PIDS+=("$pid")
    printf -v "PID_$1" '%s' "$pid"
    wait_for 10 test -e "$WORK/$1.ready" || fail "target $1 did not start"
    rm -f "$WORK/$1.ready"
}

# A TSIG key for this test run
TSIG_SECRET=$(head -c 32 /dev/urandom | base64)

# start_fakekube NAME ADDR PORT: the fake API server (tools/fakekube.py) over TLS with a bearer token, its
# files in $WORK/NAME: kubeconfig (CA and tokenFile), token (rotate it by rewriting), state.json (kept
# across a restart). Sets FAKE_<NAME> to its pid.
start_fakekube() {
    local name=$1 addr=$2 port=$3 d=$WORK/$1
    mkdir -p "$d"
    echo "$addr $port" > "$d/address"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$d/key.pem" -out "$d/ca.pem" \
        -days 2 -subj /CN=fakekube -addext "subjectAltName=IP:$addr" 2>/dev/null || fail "openssl"
    cat "$d/ca.pem" "$d/key.pem" > "$d/tls.pem"
    echo "token-$name-1" > "$d/token"
    run_fakekube "$name"
    cat > "$d/kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: fake, cluster: {server: "https://$addr:$port", certificate-authority: $d/ca.pem}}]
users: [{name: u, user: {tokenFile: $d/token}}]
contexts: [{name: c, context: {cluster: fake, user: u, namespace: default}}]
current-context: c
KC
}

# lb_record CLUSTER GEO GATEWAY ZONE [DEFAULT_GEO]: one cluster's DNSRecord for the load-balanced host
# shop.ZONE as kuadrant-operator writes it (a gateway address of weight 100 in GEO, labelled for ZONE; with
# DEFAULT_GEO, lower case, the defaultGeo chain leads to that geo's name).
lb_record() {
    local c=$1 geo=$2 gw=$3 z=$4 default=${5:-} klb=klb.shop.$4 g
    g=$(tr 'A-Z' 'a-z' <<<"$geo")
    local t=$c-hash.$klb
    cat <<REC
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: shop, namespace: gateways, labels: {kuadrant.io/coredns-zone-name: $z}}
spec:
  rootHost: shop.$z
  endpoints:
    - {dnsName: shop.$z, recordType: CNAME, targets: [$klb]}
    - {dnsName: $klb, recordType: CNAME, setIdentifier: $geo, targets: [$g.$klb], providerSpecific: [{name: geo-code, value: $geo}]}
$([[ -z $default ]] || echo "    - {dnsName: $klb, recordType: CNAME, setIdentifier: default, targets: [$default.$klb], providerSpecific: [{name: geo-code, value: \"*\"}]}")
    - {dnsName: $g.$klb, recordType: CNAME, setIdentifier: $t, targets: [$t], providerSpecific: [{name: weight, value: "100"}]}
    - {dnsName: $t, recordType: A, recordTTL: 60, targets: [$gw]}
REC
}

# run_fakekube NAME: (re)starts fakekube NAME with its address, certificate, token file and state.
run_fakekube() {
    local name=$1 d=$WORK/$1 addr port
    read -r addr port < "$d/address"
    rm -f "$d/ready"
    python3 "$(dirname "${BASH_SOURCE[0]}")/../tools/fakekube.py" "$addr" "$port" "$d/ready" --token-file "$d/token" \
        --tls "$d/tls.pem" --state "$d/state.json" >> "$d/log" 2>&1 &
    PIDS+=($!)
    printf -v "FAKE_$name" '%s' "$!"
    wait_for 10 test -e "$d/ready" || fail "fakekube $name did not start: $(cat "$d/log")"
}

# peers_yaml [--key NAME] [--secret SECRET] [--interval D] [--dead D] MEMBER...: a config's `peers:` block,
# signed with this run's key (glb-sync, $TSIG_SECRET) unless told otherwise; each MEMBER an "address:port"
# (or "name:port"); none: an empty list. The one place system tests write it.
peers_yaml() {
    local name=glb-sync secret=$TSIG_SECRET interval="" dead="" members=""
    while [[ $# -gt 0 ]]; do
        case $1 in
            --key) name=$2; shift 2 ;;
            --secret) secret=$2; shift 2 ;;
            --interval) interval=$2; shift 2 ;;
            --dead) dead=$2; shift 2 ;;
            *) members+="${members:+, }{address: \"$1\"}"; shift ;;
        esac
    done
    echo "peers:"
    echo "  key: {name: $name, secret: \"$secret\"}"
    echo "  members: [$members]"
    if [[ -n $interval ]]; then echo "  syncInterval: $interval"; fi
    if [[ -n $dead ]]; then echo "  deadAfter: $dead"; fi
}

# kube_cluster_yaml C PORT ADMIN_PORT ZONE KUBERNETES EXTRA CLUSTER...: the config of cluster C's glbd in a
# test of several clusters with their own (fake) API servers, each at ${ADDR[<cluster>]}: the test geo database,
# ZONE served by every CLUSTER (ns-<cluster>.ZONE), `kubernetes: {KUBERNETES}` with C's kubeconfig, EXTRA
# top-level lines (or ""), and every CLUSTER a peer (every 500 ms, dead after 5 s).
kube_cluster_yaml() {
    local c=$1 p=$2 admin=$3 z=$4 kube=$5 extra=$6 ns="" x
    local members=()
    shift 6
    for x in "$@"; do
        ns+="${ns:+, }{name: ns-$x.$z, addresses: [${ADDR[$x]}]}"
        members+=("${ADDR[$x]}:$p")
    done
    echo "cluster: {id: $c, instance: $c-0}"
    echo "listen: {dns: [\"${ADDR[$c]}:$p\"]}"
    echo "admin: {listen: \"${ADDR[$c]}:$admin\"}"
    echo "geoip: {database: $FIXTURES/test.mmdb}"
    if [[ -n $extra ]]; then echo "$extra"; fi
    echo "zones: [{origin: $z, nameservers: [$ns]}]"
    echo "kubernetes: {${kube:+$kube, }kubeconfig: $WORK/$c/kubeconfig}"
    peers_yaml --interval 500ms --dead 5s "${members[@]}"
}

# pair_configs ZONE A B PORT LISTEN_EXTRA A_EXTRA_LINE: configs $WORK/a.yaml and $WORK/b.yaml for two peers a
# (at A) and b (at B) serving ZONE, each with one host app-<name>.ZONE (a: 192.0.2.1, b: 192.0.2.2), synced
# every 500 ms with this run's key, dead after 3 s. LISTEN_EXTRA is added to both listen maps (", key: v");
# A_EXTRA_LINE is a top-level line for a's config only.
pair_configs() {
    local zone=$1 a=$2 b=$3 port=$4 listen_extra=$5 a_extra=$6 n addr ip
    for n in a b; do
        addr=$a ip=192.0.2.1
        [[ $n == b ]] && addr=$b ip=192.0.2.2
        cat > "$WORK/$n.yaml" <<YAML
cluster: {id: $n, instance: $n-0}
listen: {dns: ["$addr:$port"]$listen_extra}
$([[ $n == a ]] && echo "$a_extra")
zones: [{origin: $zone, nameservers: [{name: ns.$zone, addresses: [$a]}]}]
hosts:
  - {name: app-$n.$zone, endpoints: [$ip]}
$(peers_yaml --interval 500ms --dead 3s "$a:$port" "$b:$port")
YAML
    done
}

# state_origin HOST CLUSTER GEO WEIGHT DEFAULT_GEO ENDPOINT[=up|=down]...: one origin of a stateDir file
# (instance i, version and heartbeat now) with one load-balanced host; an endpoint without =down is healthy.
state_origin() {
    local host=$1 c=$2 g=$3 w=$4 d=$5 now eps="" e; shift 5
    now=$(now_ms)
    for e in "$@"; do
        eps+="${eps:+,}{\"target\":\"${e%=*}\",\"healthy\":$([[ $e == *=down ]] && echo false || echo true)}"
    done
    printf '{"cluster":"%s","instance":"i","version":%s,"heartbeat":%s,"overrides":{},"hosts":[{"host":"%s","ttl":60,"loadBalancing":{"weight":%s,"geo":"%s","defaultGeo":%s},"endpoints":[%s]}]}' \
        "$c" "$now" "$now" "$host" "$w" "$g" "$d" "$eps"
}
