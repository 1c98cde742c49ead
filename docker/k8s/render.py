#!/usr/bin/env python3
"""Renders docker/k8s/base/glbd.yaml for one cluster (docs/kind.md uses it for each kind cluster).

  render.py --cluster us-1 --geo US [--default-geo] --endpoint 172.18.255.230 \
            --peer 172.18.255.200 --secret BASE64 [--image glbd:dev] > us-1.yaml

--endpoint: this cluster's gateway address(es); --peer: the other clusters' glbd Service addresses."""
import argparse
import os
import sys

import yaml

ap = argparse.ArgumentParser()
ap.add_argument("--cluster", required=True)
ap.add_argument("--geo", required=True)
ap.add_argument("--default-geo", action="store_true")
ap.add_argument("--endpoint", action="append", required=True)
ap.add_argument("--peer", action="append", default=[])
ap.add_argument("--secret", required=True)
ap.add_argument("--image", default="glbd:dev")
a = ap.parse_args()

base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "base")
docs = [d for f in ("glbd.yaml", "serviceaccount.yaml") for d in yaml.safe_load_all(open(os.path.join(base, f))) if d]
for d in docs:
    if d["kind"] == "Secret":
        d["stringData"]["secret"] = a.secret
    elif d["kind"] == "ConfigMap":
        cfg = yaml.safe_load(d["data"]["glbd.yaml"])
        cfg["cluster"]["id"] = a.cluster
        host = cfg["hosts"][0]
        host["endpoints"] = a.endpoint
        host["loadBalancing"] = {"weight": 100, "geo": a.geo, "defaultGeo": a.default_geo}
        cfg["peers"]["members"] = [{"address": "glbd-peers.glbd.svc.cluster.local:53"}] + [
            {"address": f"{p}:53"} for p in a.peer]
        d["data"]["glbd.yaml"] = yaml.safe_dump(cfg, sort_keys=False)
    elif d["kind"] == "Deployment":
        d["spec"]["template"]["spec"]["containers"][0]["image"] = a.image
sys.stdout.write(yaml.safe_dump_all(docs, sort_keys=False))
