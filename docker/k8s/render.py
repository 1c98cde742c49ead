#!/usr/bin/env python3
"""Renders glbd's manifests for one cluster: the base (docker/k8s/base, hosts in the config file) or what
`kubectl kustomize` made of an overlay (--from FILE, "-" for stdin), with this cluster's values put in the
ConfigMap's glbd.yaml and the Secret. docs/kind.md and docs/kuadrant.md use it for each cluster.

  render.py --cluster us-1 --peer 172.18.255.200 --secret BASE64 \
            [--geo US] [--default-geo] [--endpoint 172.18.255.230]... \
            [--geo-network 10.1.0.0/16=IE]... [--nameserver ns-eu=172.18.255.200]... [--image glbd:dev] \
            [--from FILE|-] > us-1.yaml

--cluster: cluster.id; --peer: the other clusters' glbd Service addresses (the replicas of this one find
each other through the headless Service); --secret: the TSIG secret (glbd keygen --secret-only), the same in
every cluster; --geo, --default-geo, --endpoint: this cluster's entry when the config lists hosts (the
base); --geo-network: geoip.networks entries (every cluster the same); --nameserver NAME=ADDRESS: the zone's
nameservers (every cluster the same; NAME without the zone)."""
import argparse
import os
import sys

import yaml

ap = argparse.ArgumentParser()
ap.add_argument("--cluster", required=True)
ap.add_argument("--peer", action="append", default=[])
ap.add_argument("--secret", required=True)
ap.add_argument("--geo")
ap.add_argument("--default-geo", action="store_true")
ap.add_argument("--endpoint", action="append", default=[])
ap.add_argument("--geo-network", action="append", default=[])
ap.add_argument("--nameserver", action="append", default=[])
ap.add_argument("--image", default="glbd:dev")
ap.add_argument("--from", dest="source")
a = ap.parse_args()

if a.source:
    docs = [d for d in yaml.safe_load_all(sys.stdin if a.source == "-" else open(a.source)) if d]
else:
    base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "base")
    docs = [d for f in ("glbd.yaml", "serviceaccount.yaml") for d in yaml.safe_load_all(open(os.path.join(base, f)))
            if d]


def config(cfg):
    cfg["cluster"]["id"] = a.cluster
    if cfg.get("hosts"):
        if not a.geo or not a.endpoint:
            sys.exit("render.py: the config lists hosts: give --geo and --endpoint")
        host = cfg["hosts"][0]
        host["endpoints"] = a.endpoint
        host["loadBalancing"] = {"weight": 100, "geo": a.geo, "defaultGeo": a.default_geo}
    if a.geo_network:
        cfg.setdefault("geoip", {})["networks"] = dict(n.split("=", 1) for n in a.geo_network)
    if a.nameserver:
        zone = cfg["zones"][0]
        zone["nameservers"] = [{"name": f"{n.split('=', 1)[0]}.{zone['origin']}", "addresses": [n.split("=", 1)[1]]}
                               for n in a.nameserver]
    cfg["peers"]["members"] = [{"address": "glbd-peers.glbd.svc.cluster.local:53"}] + [
        {"address": f"{p}:53"} for p in a.peer]
    return cfg


for d in docs:
    if d["kind"] == "Secret":
        d["stringData"]["secret"] = a.secret
    elif d["kind"] == "ConfigMap" and "glbd.yaml" in d.get("data", {}):
        d["data"]["glbd.yaml"] = yaml.safe_dump(config(yaml.safe_load(d["data"]["glbd.yaml"])), sort_keys=False)
    elif d["kind"] == "Deployment":
        d["spec"]["template"]["spec"]["containers"][0]["image"] = a.image
sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
