#!/usr/bin/env bash
# docker/k8s manifests: every document parses, the objects a deployment needs are there and wired
# together, and the ConfigMap's glbd.yaml passes `glbd check` with the Secret mounted where the pod has it.
source "$(dirname "$0")/lib.sh"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
python3 - "$ROOT/docker/k8s/base/glbd.yaml" "$WORK" <<'PY' || fail "manifest checks"
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
work = sys.argv[2]
kinds = {}
for d in docs:
    assert {"apiVersion", "kind", "metadata"} <= d.keys(), d
    kinds.setdefault(d["kind"], []).append(d)
need = ["Namespace", "Secret", "ConfigMap", "Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy"]
assert all(k in kinds for k in need), kinds.keys()
dep = kinds["Deployment"][0]
assert dep["spec"]["replicas"] == 2
pod = dep["spec"]["template"]["spec"]
c = pod["containers"][0]
assert c["livenessProbe"] and c["readinessProbe"], "probes"
assert "/readyz" in c["readinessProbe"]["exec"]["command"], c["readinessProbe"]
assert "NET_BIND_SERVICE" in c["securityContext"]["capabilities"]["add"]
assert pod["securityContext"]["runAsNonRoot"] is True
assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, pod["securityContext"]
# OpenShift's restricted-v2 assigns the user: none is fixed here (the image's USER is numeric).
assert not {"runAsUser", "runAsGroup", "fsGroup"} & pod["securityContext"].keys(), pod["securityContext"]
# The TSIG Secret is not readable by every user (glbd refuses that): 0440, read through group 0.
assert pod["securityContext"]["supplementalGroups"] == [0], pod["securityContext"]
assert [v["secret"]["defaultMode"] for v in pod["volumes"] if "secret" in v] == [0o440], pod["volumes"]
assert pod["automountServiceAccountToken"] is False, "the base mounts no API token"
labels = dep["spec"]["template"]["metadata"]["labels"]
assert dep["spec"]["selector"]["matchLabels"].items() <= labels.items()
lb = [s for s in kinds["Service"] if s["spec"].get("type") == "LoadBalancer"][0]
assert {(p["port"], p["protocol"]) for p in lb["spec"]["ports"]} == {(53, "UDP"), (53, "TCP")}
assert lb["spec"]["selector"].items() <= labels.items()
headless = [s for s in kinds["Service"] if s["spec"].get("clusterIP") == "None"][0]
assert kinds["PodDisruptionBudget"][0]["spec"]["selector"]["matchLabels"].items() <= labels.items()
assert "/healthz" in c["livenessProbe"]["exec"]["command"], c["livenessProbe"]
assert c["livenessProbe"]["exec"]["command"][0] == "/usr/bin/glbd", "probes run the image's binary"
assert c["resources"]["requests"]["memory"] and c["resources"]["limits"]["memory"], "memory request and limit"
assert c["imagePullPolicy"] == "IfNotPresent", "an image loaded offline must be used"
netpol = kinds["NetworkPolicy"][0]
assert netpol["spec"]["podSelector"]["matchLabels"].items() <= labels.items()
allowed = {(p["port"], p["protocol"]) for rule in netpol["spec"]["ingress"] for p in rule["ports"]}
assert allowed == {(53, "UDP"), (53, "TCP")}, allowed  # peers sync over 53/tcp; nothing else gets in
# Egress: DNS anywhere; TCP only to the API server's and probes' ports, never to link-local (cloud metadata).
egress = [n for n in kinds["NetworkPolicy"] if "Egress" in n["spec"]["policyTypes"]]
assert len(egress) == 1, "no egress NetworkPolicy"
egress = egress[0]["spec"]
assert egress["podSelector"]["matchLabels"].items() <= labels.items()
tcp = {p["port"] for rule in egress["egress"] for p in rule["ports"] if p["protocol"] == "TCP" and p["port"] != 53}
assert tcp == {80, 443, 6443}, tcp
for rule in egress["egress"]:
    if any(p["port"] != 53 for p in rule["ports"]):
        blocks = [t["ipBlock"] for t in rule["to"]]
        assert all("169.254.0.0/16" in b.get("except", []) or b["cidr"] != "0.0.0.0/0" for b in blocks), blocks
# Recreate the pod's files: the ConfigMap and the Secret at their mount paths, under WORK.
volumes = {v["name"]: v for v in pod["volumes"]}
cm = {d["metadata"]["name"]: d for d in kinds["ConfigMap"]}
secrets = {d["metadata"]["name"]: d for d in kinds["Secret"]}
for m in c["volumeMounts"]:
    v = volumes[m["name"]]
    path = work + m["mountPath"]
    if "configMap" in v:
        data = cm[v["configMap"]["name"]]["data"]
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w").write(data[m["subPath"]].replace("/etc/glbd/", work + "/etc/glbd/"))
    elif "secret" in v:
        os.makedirs(path, exist_ok=True)
        for k, val in secrets[v["secret"]["secretName"]]["stringData"].items():
            open(os.path.join(path, k), "w").write(val)
            os.chmod(os.path.join(path, k), v["secret"].get("defaultMode", 0o644))  # Kubernetes' default: 0644
config = work + "/etc/glbd/glbd.yaml"
assert os.path.exists(config), "the config is not mounted where the container reads it"
assert c["args"][-1] == "/etc/glbd/glbd.yaml"
cfg = yaml.safe_load(open(config))
assert any(m["address"].startswith(headless["metadata"]["name"] + ".") for m in cfg["peers"]["members"]), "replicas cannot find each other"
print("manifests ok:", ", ".join(f"{k} x{len(v)}" for k, v in sorted(kinds.items())))
PY
# The Secret as shipped holds a placeholder everyone has: glbd check refuses it; with keygen's secret it passes.
secret_file=$(find "$WORK/etc/glbd" -name secret -path '*tsig*' | head -1)
[[ -n $secret_file ]] || fail "no TSIG secret mounted"
"$GLBD" check --config "$WORK/etc/glbd/glbd.yaml" > "$WORK/placeholder.out" 2>&1 && fail "glbd check accepted the placeholder secret"
grep -q "the manifests' placeholder" "$WORK/placeholder.out" || fail "placeholder: $(cat "$WORK/placeholder.out")"
"$GLBD" keygen --secret-only > "$secret_file"  # what docs/air-gapped.md tells: secretFile takes it as is
"$GLBD" check --config "$WORK/etc/glbd/glbd.yaml" || fail "the ConfigMap's glbd.yaml does not pass glbd check"
pass "manifests parse, are wired together, glbd check refuses the placeholder secret and passes with keygen's"

# docs/kind.md renders one manifest per cluster with render.py: each must pass the same checks.
KEY=$("$GLBD" keygen --secret-only)
[[ $("$GLBD" keygen glb-sync | awk '/secret:/ {print $2}' | tr -d '"' | base64 -d | wc -c) == 32 ]] || fail "keygen's block holds no 32-byte secret"
python3 "$ROOT/docker/k8s/render.py" --cluster eu-1 --geo IE --default-geo --endpoint 172.18.255.210 --peer 172.18.255.220 --secret "$KEY" > "$WORK/eu-1.yaml" || fail "render eu-1"
python3 "$ROOT/docker/k8s/render.py" --cluster us-1 --geo US --endpoint 172.18.255.230 --peer 172.18.255.200 --secret "$KEY" > "$WORK/us-1.yaml" || fail "render us-1"
for c in eu-1 us-1; do
    python3 - "$WORK/$c.yaml" "$WORK/$c" <<'PY' || fail "render $c: cannot extract"
import os, sys, yaml
docs = list(yaml.safe_load_all(open(sys.argv[1])))
out = sys.argv[2]
os.makedirs(out + "/tsig", exist_ok=True)
for d in docs:
    if d["kind"] == "ConfigMap":
        open(out + "/glbd.yaml", "w").write(d["data"]["glbd.yaml"].replace("/etc/glbd/", out + "/"))
    if d["kind"] == "Secret":
        open(out + "/tsig/secret", "w").write(d["stringData"]["secret"])
        os.chmod(out + "/tsig/secret", 0o440)  # as the Deployment mounts it
PY
    "$GLBD" check --config "$WORK/$c/glbd.yaml" >/dev/null || fail "rendered $c config fails glbd check: $("$GLBD" check --config "$WORK/$c/glbd.yaml" 2>&1)"
    grep -q "id: $c" "$WORK/$c/glbd.yaml" || fail "render did not set the cluster id"
done
pass "render.py: eu-1 and us-1 manifests pass glbd check"

# One image name: the base's Deployment, render.py's default and docker/image.sh's default tag are the same.
base_image=$(sed -n 's/^ *image: //p' "$ROOT/docker/k8s/base/glbd.yaml")
script_tag=$(sed -n 's/^TAG=\([^ ]*\) .*/\1/p' "$ROOT/docker/image.sh")
[[ -n $base_image && $base_image == "$script_tag" ]] || fail "the base runs '$base_image', docker/image.sh tags '$script_tag'"
grep -q "image: $base_image\$" "$WORK/eu-1.yaml" || fail "render.py's default image is not the base's $base_image"
python3 "$ROOT/docker/k8s/render.py" --cluster eu-1 --geo IE --endpoint 192.0.2.1 --secret "$KEY" --image glbd:0.1.0 |
    grep -q "image: glbd:0.1.0$" || fail "render.py --image is not used"
pass "one image name: the base, render.py and docker/image.sh all say $base_image; --image sets another"

# --probe-port: a health-check port the egress policy does not allow, allowed (once, whatever is repeated).
python3 "$ROOT/docker/k8s/render.py" --cluster eu-1 --geo IE --endpoint 192.0.2.1 --secret "$KEY" --probe-port 8080 \
    --probe-port 8080 --probe-port 443 > "$WORK/probe.yaml" || fail "render --probe-port"
python3 - "$WORK/probe.yaml" <<'PY' || fail "--probe-port did not open the port in glbd-egress"
import sys, yaml
policy = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["metadata"]["name"] == "glbd-egress")
ports = [p["port"] for rule in policy["spec"]["egress"] if rule.get("to") for p in rule["ports"]]
assert ports == [80, 443, 6443, 8080], ports
PY
out=$(python3 "$ROOT/docker/k8s/render.py" --cluster eu-1 --geo IE --endpoint 192.0.2.1 --secret "$KEY" --probe-port 70000 2>&1) &&
    fail "--probe-port 70000 taken"
pass "render.py --probe-port opens a health-check port in glbd-egress (once); a bad port is refused"
# --help says what every flag is.
help=$(python3 "$ROOT/docker/k8s/render.py" --help) || fail "render.py --help"
for flag in $(grep -o 'add_argument("--[a-z-]*' "$ROOT/docker/k8s/render.py" | sed 's/add_argument("//'); do
    line=$(grep -A1 -E "^  $flag( |$)" <<<"$help" | tr -s ' ')
    (( ${#line} > ${#flag} + 12 )) || fail "render.py --help does not say what $flag is: '$line'"
done
[[ $help == *"kubectl kustomize docker/k8s/overlays/delegate"* ]] || fail "render.py --help has no example"
"$GLBD" check --config "$ROOT/docker/k8s/base/glbd.yaml" >/dev/null 2>&1 && fail "glbd check accepted a manifest as a config"
grep -qx "USER 10053:10053" "$ROOT/docker/Dockerfile" || fail "the image's user is not numeric (runAsNonRoot cannot check a name)"
[[ $(kubectl kustomize "$ROOT/docker/k8s/base" 2>/dev/null | grep -c "kind: ClusterRoleBinding") == 0 ]] || fail "the base binds API rights"
# docker/image.sh takes the Debian mirror from the machine's apt sources (an air-gapped site's own).
mirror_of() { APT_DIR=$1 bash -c "source <(sed -n '/^machine_mirror()/,/^}/p' '$ROOT/docker/image.sh'); machine_mirror"; }
mkdir -p "$WORK/apt1/sources.list.d" "$WORK/apt2/sources.list.d" "$WORK/apt3"
printf 'Types: deb\nURIs: http://mirror.local/debian-security\nSuites: bookworm-security\nComponents: main\n\nTypes: deb\nURIs: http://mirror.local/debian\nSuites: bookworm bookworm-updates\nComponents: main\n' \
    > "$WORK/apt1/sources.list.d/debian.sources"
printf 'deb http://security.local/debian-security bookworm-security main\ndeb http://old.local/debian bookworm main\n' > "$WORK/apt2/sources.list"
[[ $(mirror_of "$WORK/apt1") == http://mirror.local/debian ]] || fail "image.sh's mirror from .sources: $(mirror_of "$WORK/apt1")"
[[ $(mirror_of "$WORK/apt2") == http://old.local/debian ]] || fail "image.sh's mirror from sources.list: $(mirror_of "$WORK/apt2")"
[[ $(mirror_of "$WORK/apt3") == http://deb.debian.org/debian ]] || fail "image.sh's mirror without sources: $(mirror_of "$WORK/apt3")"
pass "docker/image.sh takes the machine's Debian mirror (deb822 or sources.list), Debian's own without one"
unit=$ROOT/docker/systemd/glbd.service
grep -q "ExecStartPre=/usr/bin/glbd check" "$unit" || fail "systemd unit does not check the config"
for d in Type=notify NotifyAccess=main WatchdogSec=30s SystemCallFilter=@system-service SystemCallArchitectures=native RestrictNamespaces=yes LockPersonality=yes \
         MemoryDenyWriteExecute=yes RestrictRealtime=yes RestrictSUIDSGID=yes ProtectClock=yes ProtectKernelLogs=yes \
         ProtectHostname=yes ProtectProc=invisible UMask=0077; do
    grep -qx "$d" "$unit" || fail "systemd unit lacks $d"
done
score=$(systemd-analyze security --offline=true "$unit" 2>/dev/null | sed -n 's/.*Overall exposure level for glbd.service: \([0-9.]*\).*/\1/p')
[[ -n $score ]] || fail "systemd-analyze security could not score the unit"
awk -v s="$score" 'BEGIN {exit !(s <= 2.0)}' || fail "systemd unit exposure $score, want 2.0 or less"
pass "systemd unit checks the config before start; sandboxed (systemd-analyze security: exposure $score)"

# The kustomize overlays for the Kubernetes modes, rendered offline with kubectl kustomize: the ServiceAccount
# the Deployment runs as, read-only RBAC for coredns mode and status writes only in controller and delegate
# mode, and the
# ConfigMap's glbd.yaml (with the Secret where the pod mounts it) passing glbd check with its mode.
if command -v kubectl >/dev/null; then
    for mode in coredns controller delegate; do
        kubectl kustomize "$ROOT/docker/k8s/overlays/$mode" > "$WORK/$mode.yaml" || fail "kubectl kustomize $mode"
        python3 - "$WORK/$mode.yaml" "$WORK/$mode" "$mode" <<'PY' || fail "overlay $mode"
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
out, mode = sys.argv[2], sys.argv[3]
kinds = {}
for d in docs:
    kinds.setdefault(d["kind"], []).append(d)
dep = kinds["Deployment"][0]
sa = dep["spec"]["template"]["spec"]["serviceAccountName"]
assert any(s["metadata"]["name"] == sa for s in kinds["ServiceAccount"]), "no ServiceAccount " + sa
binding = kinds["ClusterRoleBinding"][0]
assert {"kind": "ServiceAccount", "name": sa, "namespace": "glbd"} in binding["subjects"], binding
role = [r for r in kinds["ClusterRole"] if r["metadata"]["name"] == binding["roleRef"]["name"]][0]
grants = {(res, v) for rule in role["rules"] for res in rule["resources"] for v in rule["verbs"]}
assert {("dnsrecords", v) for v in ("get", "list", "watch")} <= grants, grants
assert (("dnsrecords/status", "patch") in grants) == (mode != "coredns"), grants
assert dep["spec"]["template"]["spec"]["automountServiceAccountToken"] is True, "the Kubernetes source needs its token"
assert not any(res == "dnsrecords" and v in ("create", "update", "patch", "delete") for res, v in grants), grants
# Secrets (a record's additionalHeadersRef): get by name only, never listed or watched.
secret_verbs = {v for r in kinds["ClusterRole"] for rule in r["rules"] if "secrets" in rule["resources"] for v in rule["verbs"]}
assert secret_verbs == {"get"}, secret_verbs
os.makedirs(out + "/etc/glbd/tsig", exist_ok=True)
cfg = kinds["ConfigMap"][0]["data"]["glbd.yaml"].replace("/etc/glbd/", out + "/etc/glbd/")
assert yaml.safe_load(cfg)["kubernetes"]["mode"] == mode
assert "169.254.0.0/16" in yaml.safe_load(cfg)["kubernetes"]["denyNetworks"], "cloud metadata not denied"
open(out + "/etc/glbd/glbd.yaml", "w").write(cfg)
assert kinds["Secret"][0]["stringData"]["secret"].startswith("REPLACE/"), "the shipped Secret is a placeholder"
PY
        (umask 0337 && "$GLBD" keygen --secret-only > "$WORK/$mode/etc/glbd/tsig/secret")  # 0440, as mounted
        "$GLBD" check --config "$WORK/$mode/etc/glbd/glbd.yaml" >/dev/null || fail "overlay $mode: $("$GLBD" check --config "$WORK/$mode/etc/glbd/glbd.yaml" 2>&1)"
    done
    # Each cluster its own: the overlay rendered per cluster (docs/kind.md 4b, docs/kuadrant.md) gives each its
    # id, its peer and the key; both pass glbd check.
    for c in eu-1 us-1; do
        peer=$([[ $c == eu-1 ]] && echo 172.18.255.220 || echo 172.18.255.200)
        kubectl kustomize "$ROOT/docker/k8s/overlays/controller" |
            python3 "$ROOT/docker/k8s/render.py" --from - --cluster $c --peer $peer --secret "$KEY" \
                --geo-network 10.1.0.0/16=IE --geo-network 10.2.0.0/16=US > "$WORK/overlay-$c.yaml" || fail "render overlay $c"
        python3 - "$WORK/overlay-$c.yaml" "$WORK/overlay-$c" "$c" "$peer" <<'PY' || fail "overlay $c: wrong per-cluster values"
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
out, cluster, peer = sys.argv[2], sys.argv[3], sys.argv[4]
os.makedirs(out + "/tsig", exist_ok=True)
cm = [d for d in docs if d["kind"] == "ConfigMap"][0]
cfg = yaml.safe_load(cm["data"]["glbd.yaml"])
assert cfg["cluster"]["id"] == cluster, cfg["cluster"]
assert {"address": f"{peer}:53"} in cfg["peers"]["members"], cfg["peers"]["members"]
assert cfg["geoip"]["networks"] == {"10.1.0.0/16": "IE", "10.2.0.0/16": "US"}, cfg.get("geoip")
assert cfg["kubernetes"]["mode"] == "controller"
open(out + "/glbd.yaml", "w").write(cm["data"]["glbd.yaml"].replace("/etc/glbd/", out + "/"))
open(out + "/tsig/secret", "w").write([d for d in docs if d["kind"] == "Secret"][0]["stringData"]["secret"])
os.chmod(out + "/tsig/secret", 0o440)  # as the Deployment mounts it
PY
        "$GLBD" check --config "$WORK/overlay-$c/glbd.yaml" >/dev/null || fail "overlay for $c: $("$GLBD" check --config "$WORK/overlay-$c/glbd.yaml" 2>&1)"
    done
    pass "kustomize overlays coredns, controller and delegate: ServiceAccount, RBAC by mode (Secrets get only), denyNetworks, configs pass glbd check; rendered per cluster (eu-1, us-1) with their own id, peer and key"

    # An install in a zone of the user's own (docs/kuadrant.md, "Install"): the delegate overlay rendered with
    # --zone glb.example.com and the nameservers' addresses. The rendered glbd, run here with this test's
    # addresses and API server in place of the pod's (everything else as rendered), answers the user's
    # delegated record for shop.glb.example.com and says so in its status.
    A=127.0.27.1 K=127.0.27.2
    kubectl kustomize "$ROOT/docker/k8s/overlays/delegate" |
        python3 "$ROOT/docker/k8s/render.py" --from - --zone glb.example.com --cluster us-1 --image glbd:1.2 \
            --nameserver ns-eu=198.51.100.53 --nameserver ns-us=$A --peer 198.51.100.53 --secret "$KEY" \
            --owner shop=shop.glb.example.com --deny-network 10.96.0.0/12 > "$WORK/zone.yaml" || fail "render --zone"
    start_fakekube own $K 6527
    python3 - "$WORK/zone.yaml" "$WORK/zone" "$A" "$WORK/own/kubeconfig" <<'PY' || fail "render --zone: wrong values"
import os, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
out, addr, kubeconfig = sys.argv[2], sys.argv[3], sys.argv[4]
cfg = yaml.safe_load([d for d in docs if d["kind"] == "ConfigMap"][0]["data"]["glbd.yaml"])
zone = cfg["zones"][0]
assert zone["origin"] == "glb.example.com", zone
assert zone["nameservers"] == [{"name": "ns-eu.glb.example.com", "addresses": ["198.51.100.53"]},
                               {"name": "ns-us.glb.example.com", "addresses": [addr]}], zone["nameservers"]
assert "glb.example.test" not in yaml.safe_dump(cfg), "the example zone is left somewhere"
assert cfg["kubernetes"]["mode"] == "delegate" and cfg["kubernetes"]["owners"] == {"shop": ["shop.glb.example.com"]}
assert "10.96.0.0/12" in cfg["kubernetes"]["denyNetworks"] and "169.254.0.0/16" in cfg["kubernetes"]["denyNetworks"]
assert [d for d in docs if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]["containers"][0]["image"] == "glbd:1.2"
# With owners, Secrets (probe headers) may be read only in the owners' namespaces: no cluster-wide binding.
bindings = [(d["kind"], d["metadata"].get("namespace")) for d in docs if d["metadata"]["name"] == "glbd-probe-headers"
            and d["kind"].endswith("Binding")]
assert bindings == [("RoleBinding", "shop")], bindings
# This machine in place of the pod: listen and admin on the test's address, the API through a kubeconfig,
# stateDir and the Secret under the test's directory, no peer to reach.
os.makedirs(out + "/tsig", exist_ok=True)
open(out + "/tsig/secret", "w").write([d for d in docs if d["kind"] == "Secret"][0]["stringData"]["secret"])
os.chmod(out + "/tsig/secret", 0o440)  # as the Deployment mounts it
cfg["listen"]["dns"] = [addr + ":5527"]
cfg["admin"]["listen"] = addr + ":9527"
cfg["kubernetes"]["kubeconfig"] = kubeconfig
cfg["peers"]["key"]["secretFile"] = out + "/tsig/secret"
cfg["peers"]["members"] = []
cfg["stateDir"] = out + "/state"
cfg["log"]["format"] = "text"
open(out + "/glbd.yaml", "w").write(yaml.safe_dump(cfg))
PY
    mkdir -p "$WORK/zone/state"
    start_glbd zone "$WORK/zone/glbd.yaml"
    cat <<REC | KUBECONFIG=$WORK/own/kubeconfig kubectl apply --validate=false -f - >/dev/null || fail "apply the user's record"
apiVersion: kuadrant.io/v1alpha1
kind: DNSRecord
metadata: {name: shop-api, namespace: shop}
spec:
  rootHost: shop.glb.example.com
  delegate: true
  endpoints: [{dnsName: shop.glb.example.com, recordType: A, recordTTL: 60, targets: [192.0.2.80]}]
REC
    wait_for 20 bash -c "[[ \$(dig @$A -p 5527 +short shop.glb.example.com A) == 192.0.2.80 ]]" ||
        fail "the rendered glbd does not answer shop.glb.example.com: $(dig @$A -p 5527 shop.glb.example.com A)"
    [[ $(dig @$A -p 5527 +short glb.example.com NS | sort | tr '\n' ' ') == "ns-eu.glb.example.com. ns-us.glb.example.com. " ]] ||
        fail "NS of glb.example.com: $(dig @$A -p 5527 +short glb.example.com NS)"
    wait_for 20 bash -c "[[ \$(KUBECONFIG=$WORK/own/kubeconfig kubectl -n shop get dnsrecord shop-api -o jsonpath='{.status.remoteRecordStatuses.glbd.conditions[0].reason}') == ProviderSuccess ]]" ||
        fail "no ProviderSuccess on the user's record"
    stop_glbd zone
    out=$(kubectl kustomize "$ROOT/docker/k8s/overlays/delegate" |
        python3 "$ROOT/docker/k8s/render.py" --from - --zone glb.example.com --cluster us-1 --secret "$KEY" 2>&1) &&
        fail "--zone without --nameserver was taken"
    [[ $out == *"--zone glb.example.com: give --nameserver NAME=ADDRESS"* ]] || fail "--zone without --nameserver: $out"
    pass "render.py --zone glb.example.com of the delegate overlay: zone, nameservers, owners, denyNetworks, image set, no example zone left; that glbd answers the user's delegated record and writes its status; --zone without --nameserver refused"
else
    echo "kubectl missing: the kustomize overlays were not rendered"
fi
