#!/usr/bin/env bash
# The status page at the admin endpoint's /, in a real browser (Debian's chromium, headless): one glbd with a
# token, whose view holds five clusters (its own, the others from stateDir as after a restart): ie-a healthy
# (cluster.location Dublin), us degraded (one endpoint of two down, the default geo), oc down (its only
# endpoint down), jp drained by an override, and br healthy; a peer that does not answer. The test checks the
# rendered DOM: the token prompt when none is given; each cluster's state on the map and in the table, with
# the map's colours; the peer; answer shares from real queries; an explain result. It saves a screenshot as
# status-page.png in the test's working directory (or $GLBD_SCREENSHOT).
source "$(dirname "$0")/lib.sh"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[[ -n $CHROMIUM ]] || { echo "skip: chromium is not installed (Debian: apt-get install chromium)"; exit 77; }
ADDR=127.0.0.233 PORT=5333 ADMIN=127.0.0.233:9333 PEER=127.0.0.234:5333
TOKEN=$(head -c 18 /dev/urandom | base64 | tr '+/' '-_')
SHOT=${GLBD_SCREENSHOT:-$PWD/status-page.png}
mkdir -p "$WORK/state"
now=$(now_ms)
origin() { state_origin shop.glb.page.test "$1" "$2" 100 "$3" "${@:4}"; }  # CLUSTER GEO DEFAULT ENDPOINT=up|down...
echo "{\"saved\":$now,\"origins\":[$(origin us US true 198.51.100.10=up 198.51.100.11=down),$(origin oc GEO-OC false 203.0.113.10=down),$(origin jp JP false 192.0.2.40=up),$(origin br BR false 192.0.2.50=up)]}" \
    > "$WORK/state/state.json"
cat > "$WORK/glbd.yaml" <<YAML
cluster: {id: ie-a, instance: i, location: {lat: 53.3498, lon: -6.2603}}
listen: {dns: ["$ADDR:$PORT"]}
admin: {listen: "$ADMIN", token: "$TOKEN"}
rateLimit: {responsesPerSecond: 0}
geoip: {database: $FIXTURES/test.mmdb}
zones:
  - origin: glb.page.test
    nameservers: [{name: ns1.glb.page.test, addresses: [192.0.2.53]}]
hosts:
  - name: shop.glb.page.test
    endpoints: [192.0.2.11]
    loadBalancing: {weight: 100, geo: IE}
$(peers_yaml --key page --secret "$(head -c 32 /dev/urandom | base64)" --dead 1h "$PEER")
stateDir: $WORK/state
YAML
start_glbd p "$WORK/glbd.yaml"
api() { curl -sf -H "Authorization: Bearer $TOKEN" "$@"; }
# (Asked through explain, which counts no answer: the share column below counts only the queries sent for it.)
served() { api "http://$ADMIN/v1/explain?name=shop.glb.page.test&subnet=10.6.0.0/20" | contains '"A 192.0.2.50"'; }
wait_for 10 served || fail "the view from stateDir is not served"
api -X PUT -d '{"target":"jp","state":"down"}' "http://$ADMIN/v1/overrides" >/dev/null || fail "override refused"

# The page is served without the token (it is static and holds no data); the API is not.
headers=$(curl -sS -D - -o "$WORK/page.html" "http://$ADMIN/")
contains "HTTP/1.1 200" <<<"$headers" || fail "GET / without the token: $headers"
contains "Content-Security-Policy: default-src 'none'; script-src 'sha256-" <<<"$headers" || fail "no CSP: $headers"
contains "connect-src 'self'" <<<"$headers" || fail "CSP lets the page connect elsewhere: $headers"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://$ADMIN/v1/state") == 401 ]] || fail "/v1/state without the token"
grep -E 'https?://' "$WORK/page.html" | grep -v 'www.w3.org/2000/svg' >/dev/null && fail "the page names an external URL"
pass "/ served without the token, with a CSP allowing only its own script and this endpoint; the API still needs it"

# Answers for the share column: 12 from Ireland (ie-a), 6 from the US and 6 from Japan (drained: the default
# geo, us), 3 from Brazil (br).
for i in $(seq 1 12); do q "$ADDR" "$PORT" shop.glb.page.test A +subnet=10.1.$i.0/24 >/dev/null; done
for i in $(seq 1 6); do q "$ADDR" "$PORT" shop.glb.page.test A +subnet=10.3.$i.0/24 >/dev/null; done
for i in $(seq 1 6); do q "$ADDR" "$PORT" shop.glb.page.test A +subnet=10.5.$i.0/24 >/dev/null; done
for i in $(seq 1 3); do q "$ADDR" "$PORT" shop.glb.page.test A +subnet=10.6.0.0/24 >/dev/null; done

browse() {  # URL [chromium options...]: the DOM after the page's scripts ran
    local url=$1; shift
    timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$WORK/chromium" \
        --virtual-time-budget=4000 "$@" "$url" 2>>"$WORK/chromium.log"
}
dom=$(browse "http://$ADMIN/" --dump-dom)
python3 - "$dom" <<'PY' || fail "without a token: $dom"
import sys, re
dom = sys.argv[1]
assert re.search(r'<section id="token-section" class="wide">', dom), "the token prompt is not shown"
assert 'data-cluster="' not in dom, "clusters shown without the token"
assert "the admin token is needed" in dom
PY
pass "without a token the page asks for it and shows nothing"

url="http://$ADMIN/#token=$TOKEN&explain=shop.glb.page.test&client=10.5.0.0/16"
dom=$(browse "$url" --dump-dom)
python3 - "$dom" "$PEER" <<'PY' || fail "the rendered page is not what the state says (DOM in the test log)"
import sys
from html.parser import HTMLParser
dom, peer = sys.argv[1], sys.argv[2]

class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.elements, self.stack = [], []
    def handle_starttag(self, tag, attrs):
        e = {"tag": tag, "attrs": dict(attrs), "text": "", "children": []}
        if self.stack:
            self.stack[-1]["children"].append(e)
        self.elements.append(e)
        if tag not in ("meta", "input", "link", "br", "path", "circle"):
            self.stack.append(e)
        else:
            e["closed"] = True
    def handle_endtag(self, tag):
        while self.stack:
            e = self.stack.pop()
            if e["tag"] == tag:
                break
    def handle_data(self, data):
        for e in self.stack:
            e["text"] += data

d = Dom()
d.feed(dom)
def find(tag, **want):
    return [e for e in d.elements if e["tag"] == tag and all(e["attrs"].get(k.replace("_", "-")) == v for k, v in want.items())]
def one(tag, **want):
    found = find(tag, **want)
    assert len(found) == 1, (tag, want, len(found), dom[:3000])
    return found[0]

def cluster_row(cluster):  # the clusters table's row (the hosts table's rows also name a cluster)
    rows = [e for e in find("tr", data_cluster=cluster) if "data-host" not in e["attrs"]]
    assert len(rows) == 1, (cluster, rows)
    return rows[0]

states = {"ie-a": "healthy", "us": "degraded", "oc": "down", "jp": "drained", "br": "healthy"}
colours = {"healthy": "#2e7d32", "degraded": "#e0a100", "down": "#c62828", "drained": "#7a7a7a"}
for cluster, state in states.items():
    row = cluster_row(cluster)
    assert row["attrs"]["data-state"] == state, (cluster, row["attrs"], state)
    assert state in row["text"], (cluster, row["text"])
    marker = one("g", data_cluster=cluster)
    assert marker["attrs"]["data-state"] == state, (cluster, marker["attrs"])
    circle = [c for c in marker["children"] if c["tag"] == "circle"][0]
    assert circle["attrs"]["fill"] == colours[state], (cluster, circle["attrs"])
# Dublin from cluster.location; the others from their geo codes' points.
assert "53.35, -6.26 (cluster.location)" in cluster_row("ie-a")["text"]
assert "(geo BR)" in cluster_row("br")["text"]
circle = [c for c in one("g", data_cluster="ie-a")["children"] if c["tag"] == "circle"][0]
assert abs(float(circle["attrs"]["cx"]) - (-6.2603 + 180) * 2) < 0.01 and abs(float(circle["attrs"]["cy"]) - (90 - 53.3498) * 2) < 0.01

# The hosts come a page at a time (/v1/hosts); the count is the summary's.
count = one("span", id="hosts-count")["text"]
assert count.startswith("1 hosts, ") and "unhealthy endpoints" in count, count

p = one("tr", data_peer=peer)
assert "down" in p["text"] and "never" in p["text"], p["text"]

# Shares of this server's answers for the host: ie-a 12, us 12 (6 US + 6 drained Japan), br 3, others 0.
shares = {}
for row in find("tr", data_host="shop.glb.page.test"):
    cell = [c for c in row["children"] if c["attrs"].get("class") == "share"][0]
    shares[row["attrs"]["data-cluster"]] = (cell["attrs"].get("data-share"), cell["text"])
assert shares["ie-a"][0] == "0.444" and "(12)" in shares["ie-a"][1], shares
assert shares["us"][0] == "0.444" and "(12)" in shares["us"][1], shares
assert shares["br"][0] == "0.111" and shares["jp"][0] == "0.000" and shares["oc"][0] == "0.000", shares
eps = {e["text"]: e["attrs"]["class"] for e in find("span") if e["attrs"].get("class", "").startswith("ep ")}
assert (eps["198.51.100.11"], eps["198.51.100.10"], eps["192.0.2.40"]) == ("ep down", "ep up", "ep down forced"), eps

# The explain box, filled from the address: Japan's group is drained, so the default geo (us) answers.
answer = one("p", id="explain-answer")
assert (answer["attrs"]["data-group"], answer["attrs"]["data-clusters"], answer["attrs"]["data-answer"]) == ("defaultGeo", "us", "A 198.51.100.10"), answer
assert "us US weight 100" in one("p", id="explain-candidates")["text"]
steps = [(r["children"][0]["text"], r["attrs"]["data-result"]) for r in find("tr") if "data-result" in r["attrs"]]
assert ("country", "none usable") in steps and ("defaultGeo", "chosen") in steps, steps
assert "ECS scope /16" in answer["text"], answer["text"]
PY
pass "clusters, health colours, the drained cluster, the peer, answer shares and an explain result in the DOM"

browse "$url" --screenshot="$SHOT" --window-size=1280,900 --hide-scrollbars >/dev/null
python3 - "$SHOT" <<'PY' || fail "screenshot $SHOT"
import struct, sys
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", data[16:24])
assert (w, h) == (1280, 900) and len(data) > 30000, (w, h, len(data))
PY
pass "screenshot saved: $SHOT ($(stat -c %s "$SHOT") bytes)"

# A dead cluster's endpoints: grey and struck through, not green, whatever health they last had. A second glbd
# whose stateDir holds one remote cluster (its endpoint last known healthy) that nothing refreshes: dead after 1.5 s.
stop_glbd p
mkdir -p "$WORK/state2"
echo "{\"saved\":$(now_ms),\"origins\":[$(origin gone US true 192.0.2.60=up)]}" > "$WORK/state2/state.json"
sed -e "s|^stateDir: .*|stateDir: $WORK/state2|" -e "s|deadAfter: 1h|deadAfter: 1500ms\n  syncInterval: 500ms|" "$WORK/glbd.yaml" > "$WORK/dead.yaml"
grep -q "deadAfter: 1500ms" "$WORK/dead.yaml" || fail "the second config has no short deadAfter"
start_glbd dead "$WORK/dead.yaml"
gone_dead() { api "http://$ADMIN/v1/hosts" | python3 -c 'import json,sys; h=json.load(sys.stdin)["hosts"]; sys.exit(0 if any(e["cluster"]=="gone" and not e["alive"] for x in h for e in x["entries"]) else 1)'; }
wait_for 20 gone_dead || fail "cluster gone never shown dead in /v1/hosts"
dom=$(browse "http://$ADMIN/#token=$TOKEN" --dump-dom)
python3 - "$dom" <<'PY' || fail "a dead cluster's endpoint is not shown as dead (DOM in the test log)"
import re, sys
dom = sys.argv[1]
span = re.search(r'<span class="([^"]*)" title="([^"]*)">192\.0\.2\.60</span>', dom)
assert span, dom[-3000:]
assert span.group(1) == "ep dead", span.groups()
assert "cluster gone is dead" in span.group(2) and "last known healthy" in span.group(2), span.groups()
own = re.search(r'<span class="([^"]*)"[^>]*>192\.0\.2\.11</span>', dom)
assert own and own.group(1) == "ep up", own and own.groups()
PY
pass "a dead cluster's endpoint last known healthy is shown dead (grey, struck through), its title saying why"
