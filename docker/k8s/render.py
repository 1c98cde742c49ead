#!/usr/bin/env python3
"""Renders glbd's manifests for one cluster: the base (docker/k8s/base: hosts in the config file) or what
`kubectl kustomize` made of an overlay (--from FILE, "-" for stdin: docker/k8s/overlays/coredns, delegate or
controller: hosts from Kuadrant's DNSRecords), with this cluster's values in the ConfigMap's glbd.yaml, the
TSIG secret in the Secret and the image in the Deployment. Every install path goes through it: the manifests
as shipped hold an example zone, example addresses and a placeholder secret that glbd refuses to start with.
docs/kind.md and docs/kuadrant.md use it for each cluster.

Example (the delegate overlay, zone glb.example.com served by two clusters' glbd at 198.51.100.53 and
203.0.113.53; run once per cluster with its own --cluster and --peer):

  kubectl kustomize docker/k8s/overlays/delegate |
    python3 docker/k8s/render.py --from - --zone glb.example.com --cluster us-1 \\
      --nameserver ns-eu=198.51.100.53 --nameserver ns-us=203.0.113.53 \\
      --peer 198.51.100.53 --secret "$(glbd keygen --secret-only)" > us-1.yaml
"""
import argparse
import os
import re
import sys

import yaml

EXAMPLE_ZONE = "glb.example.test"  # the zone the shipped manifests name
BASE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "base")
# The image the base's Deployment names: the one default, read where it is written.
BASE_IMAGE = next(d["spec"]["template"]["spec"]["containers"][0]["image"]
                  for d in yaml.safe_load_all(open(os.path.join(BASE, "glbd.yaml"))) if d and d["kind"] == "Deployment")
LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")


def dns_name(text):
    name = text.lower().rstrip(".")
    if not name or len(name) > 253 or not all(LABEL.match(part) for part in name.split(".")):
        raise argparse.ArgumentTypeError(f"not a DNS name: {text!r}")
    return name


def namespace(text):
    if not LABEL.match(text):
        raise argparse.ArgumentTypeError(f"not a namespace name: {text!r}")
    return text


def pair(text):
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return tuple(text.split("=", 1))


ap = argparse.ArgumentParser(
    prog="render.py", description=__doc__.split("\n\n")[0], epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--cluster", required=True, metavar="ID",
                help="this cluster's cluster.id ([a-z0-9-], one per cluster; its replicas share it)")
ap.add_argument("--secret", required=True, metavar="BASE64",
                help="the TSIG secret, the same in every cluster (glbd keygen --secret-only)")
ap.add_argument("--zone", type=dns_name, metavar="ZONE",
                help=f"the zone glbd serves, the one your parent zone delegates (e.g. glb.example.com; the same as "
                     f"the Kuadrant provider Secret's ZONES): replaces the example {EXAMPLE_ZONE} in the zone and "
                     f"the hosts; needs --nameserver")
ap.add_argument("--nameserver", action="append", default=[], type=pair, metavar="NAME=ADDRESS",
                help="one of the zone's nameservers, a cluster's glbd Service address (NAME without the zone, "
                     "e.g. ns-eu=198.51.100.53); every cluster's, the same in every cluster, as the parent's NS "
                     "records and glue list them; repeat for each (an address may be IPv4 or IPv6)")
ap.add_argument("--peer", action="append", default=[], metavar="ADDRESS",
                help="another cluster's glbd Service address (port 53); one is enough, more are better at a "
                     "first start (the rest are learnt); this cluster's replicas find each other through the "
                     "headless Service; none: a single cluster")
ap.add_argument("--image", default=BASE_IMAGE, metavar="IMAGE",
                help=f"the container image (default {BASE_IMAGE}, the base's, as docker/image.sh tags it; an image "
                     f"built with --tag NAME needs --image NAME)")
ap.add_argument("--geo", metavar="CODE",
                help="base only (hosts in the config file): this cluster's geo (IE, US, GEO-EU...)")
ap.add_argument("--default-geo", action="store_true", help="base only: this cluster's geo is the default geo")
ap.add_argument("--endpoint", action="append", default=[], metavar="ADDRESS",
                help="base only: this cluster's gateway address for the host; repeat for more")
ap.add_argument("--host", type=dns_name, metavar="NAME",
                help="base only: the load-balanced host's name (default shop.<zone>)")
ap.add_argument("--geo-network", action="append", default=[], type=pair, metavar="CIDR=CODE",
                help="a geoip.networks entry (e.g. 10.1.0.0/16=IE), the same in every cluster; repeat for more")
ap.add_argument("--group", metavar="GROUP",
                help="overlays: this cluster's failover group (kubernetes.group, as dns-operator's GROUP)")
ap.add_argument("--groups-from", action="append", default=[], type=namespace, metavar="NAMESPACE",
                help="overlays: a namespace whose DNSRecords may set the active groups "
                     "(kuadrant-active-groups.<zone>; default: glbd's own namespace); repeat for more")
ap.add_argument("--owner", action="append", default=[], type=pair, metavar="NAMESPACE=NAME",
                help="overlays: kubernetes.owners: a name (and what lies below it) that NAMESPACE's DNSRecords may "
                     "publish, e.g. shop=shop.glb.example.com (the zone itself gives that namespace the apex); "
                     "repeat for more; none: any name under a record's own rootHost. With owners, glbd may read "
                     "probe-header Secrets only in their namespaces (a RoleBinding in each), not cluster-wide")
ap.add_argument("--deny-network", action="append", default=[], metavar="CIDR",
                help="overlays: one more kubernetes.denyNetworks entry (your pod and service CIDRs): endpoint "
                     "addresses a DNSRecord may not make glbd serve or probe; repeat for more")
ap.add_argument("--probe-port", action="append", default=[], type=int, metavar="PORT",
                help="one more TCP port glbd's pods may reach for health checks (the egress NetworkPolicy "
                     "glbd-egress allows 80 and 443): a healthCheck.port it does not allow fails every probe; "
                     "repeat for more")
ap.add_argument("--from", dest="source", metavar="FILE",
                help="what `kubectl kustomize` rendered of an overlay (\"-\": stdin); default: the base")
a = ap.parse_args()


def fail(why):
    sys.exit(f"render.py: {why}")


if a.source:
    docs = [d for d in yaml.safe_load_all(sys.stdin if a.source == "-" else open(a.source)) if d]
else:
    docs = [d for f in ("glbd.yaml", "serviceaccount.yaml") for d in yaml.safe_load_all(open(os.path.join(BASE, f)))
            if d]


def in_zone(name, old, new):
    """`name` moved from zone `old` to `new` (itself when outside `old`)."""
    if name == old:
        return new
    return name[:-len(old)] + new if name.endswith("." + old) else name


def config(cfg):
    cfg["cluster"]["id"] = a.cluster
    zone = cfg["zones"][0]
    old = zone["origin"]
    if a.zone:
        if not a.nameserver:
            fail(f"--zone {a.zone}: give --nameserver NAME=ADDRESS for every cluster's glbd (the example's "
                 "addresses are not yours)")
        zone["origin"] = a.zone
        for h in cfg.get("hosts") or []:
            h["name"] = in_zone(h["name"], old, a.zone)
    if a.nameserver:
        zone["nameservers"] = [{"name": f"{n}.{zone['origin']}", "addresses": [addr]} for n, addr in a.nameserver]
    if cfg.get("hosts"):
        if not a.geo or not a.endpoint:
            fail("the config lists hosts (the base): give --geo and --endpoint")
        host = cfg["hosts"][0]
        if a.host:
            if host_zone(a.host, zone["origin"]) is None:
                fail(f"--host {a.host} is not in zone {zone['origin']}")
            host["name"] = a.host
        host["endpoints"] = a.endpoint
        host["loadBalancing"] = {"weight": 100, "geo": a.geo, "defaultGeo": a.default_geo}
    elif a.geo or a.endpoint or a.host:
        fail("--geo, --endpoint and --host are for the base (hosts in the config file); an overlay's hosts come "
             "from DNSRecords")
    if a.geo_network:
        cfg.setdefault("geoip", {})["networks"] = dict(a.geo_network)
    kube = cfg.get("kubernetes")
    if (a.group or a.groups_from or a.owner or a.deny_network) and kube is None:
        fail("--group, --groups-from, --owner and --deny-network are for an overlay (--from): the base reads no "
             "DNSRecords")
    if kube is not None:
        if a.group:
            kube["group"] = a.group
        if a.groups_from:
            kube["groupsFrom"] = a.groups_from
        owners = {}
        for ns, name in a.owner:
            if host_zone(dns_name(name), zone["origin"]) is None:
                fail(f"--owner {ns}={name}: not in zone {zone['origin']}")
            owners.setdefault(namespace(ns), []).append(dns_name(name))
        if owners:
            kube["owners"] = owners
        kube["denyNetworks"] = list(kube.get("denyNetworks") or []) + a.deny_network
    cfg["peers"]["members"] = [{"address": "glbd-peers.glbd.svc.cluster.local:53"}] + [
        {"address": f"[{p}]:53" if ":" in p else f"{p}:53"} for p in a.peer]
    return cfg


def host_zone(name, origin):
    bare = name[2:] if name.startswith("*.") else name
    return origin if bare == origin or bare.endswith("." + origin) else None


rendered = False
probe_ports_set = False
for d in docs:
    if d["kind"] == "Secret":
        d["stringData"]["secret"] = a.secret
    elif d["kind"] == "ConfigMap" and "glbd.yaml" in d.get("data", {}):
        d["data"]["glbd.yaml"] = yaml.safe_dump(config(yaml.safe_load(d["data"]["glbd.yaml"])), sort_keys=False)
        rendered = True
    elif d["kind"] == "Deployment":
        d["spec"]["template"]["spec"]["containers"][0]["image"] = a.image
    elif d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "glbd-egress" and a.probe_port:
        if not all(0 < p < 65536 for p in a.probe_port):
            fail(f"--probe-port: not a port: {a.probe_port}")
        probes = next(rule for rule in d["spec"]["egress"] if rule.get("to"))  # the rule of the probes' ports
        allowed = {p["port"] for p in probes["ports"]}
        probes["ports"] += [{"port": p, "protocol": "TCP"} for p in dict.fromkeys(a.probe_port) if p not in allowed]
        probe_ports_set = True
if not rendered:
    fail("no ConfigMap with glbd.yaml in the manifests read")
# Probe-header Secrets: a record's healthCheck.additionalHeadersRef names one in its own namespace. With owners
# only their namespaces' records are served, so glbd's `get` of Secrets is bound in those namespaces alone.
owner_namespaces = list(dict.fromkeys(ns for ns, _ in a.owner))
if owner_namespaces:
    binding = next((d for d in docs if d["kind"] == "ClusterRoleBinding" and d["metadata"]["name"] == "glbd-probe-headers"),
                   None)
    if binding is not None:
        docs.remove(binding)
        docs += [{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                  "metadata": {"name": "glbd-probe-headers", "namespace": ns},
                  "roleRef": binding["roleRef"], "subjects": binding["subjects"]} for ns in owner_namespaces]
if a.probe_port and not probe_ports_set:
    fail("--probe-port: no NetworkPolicy glbd-egress in the manifests read")
sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
