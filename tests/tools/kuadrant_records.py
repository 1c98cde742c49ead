#!/usr/bin/env python3
"""kuadrant_records: DNSRecords exactly as Kuadrant writes them, for glbd's tests. The generation code is a
line-by-line port of upstream's (names, hashes, order, TTLs), not a guess at its output:

  - kuadrant-operator internal/controller/dnspolicy_dnsrecords.go (v1.5): desiredDNSRecord, one record per
    Gateway listener, named <gateway>-<listener>, labelled kuadrant.io/listener-name;
  - dns-operator pkg/builder/endpoints.go (v0.15-v0.17): getSimpleEndpoints, getLoadBalancedEndpoints, the
    sort by dnsName+setIdentifier, DefaultTTL 60 and DefaultLoadBalancedTTL 300;
  - dns-operator internal/common/hash: ToBase36Hash = lower(base36(sha224(s))), ToBase36HashLen;
  - dns-operator internal/provider/endpoint/authoritative_dnsrecord.go: authoritative-record-<HashRootHost>,
    labels kuadrant.io/authoritative-record(=true, -hash), rootHost without "*.", and the CoreDNS provider's
    labels (kuadrant.io/dns-provider-name=coredns, kuadrant.io/coredns-zone-name=<zone>);
  - dns-operator internal/external-dns/registry (txt.go, name_mapper_kuadrant.go): a TXT registry record
    beside every endpoint, kuadrant-<hash8(owner)>-<type>-<name> ("*" as "wildcard"), value
    "heritage=external-dns,external-dns/owner=<owner>,external-dns/version=1" in quotes, with the endpoint's
    setIdentifier and providerSpecific.

    kuadrant_records.py OUT_DIR          write every scenario as OUT_DIR/<scenario>.json (a kind: List)
    kuadrant_records.py --check DIR      exit 1 when DIR's files differ from what would be written

Each scenario is described in SCENARIOS below; tests/fixtures/kuadrant/README.md lists them."""
import hashlib
import json
import os
import sys

ZONE = "glb.example.com"
OTHER_ZONE = "example.net"
B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def base36(data):
    """github.com/martinlindhe/base36 EncodeBytes, lower-cased: the bytes as one big-endian number, with a
    leading '0' for each leading zero byte."""
    x = int.from_bytes(data, "big")
    out = ""
    while x > 0:
        x, m = divmod(x, 36)
        out = B36[m] + out
    for b in data:
        if b != 0:
            break
        out = "0" + out
    return out


def hash_len(s, n):
    return base36(hashlib.sha224(s.encode()).digest())[:n]


def endpoint(name, targets, rtype, set_id, ttl, provider=None):
    e = {"dnsName": name, "recordTTL": ttl, "recordType": rtype, "targets": list(targets)}
    if set_id:
        e["setIdentifier"] = set_id
    if provider:
        e["providerSpecific"] = [{"name": k, "value": v} for k, v in provider]
    return e


def build_endpoints(hostname, addresses, gateway, lb=None, ttl=60, lb_ttl=300):
    """pkg/builder EndpointsBuilder.Build. `addresses`: [(type, value)], type IPAddress or Hostname;
    `gateway`: (name, namespace); `lb`: dict(id, weight, geo, default) or None (simple)."""
    ips = [v for t, v in addresses if t == "IPAddress"]
    hosts = [v for t, v in addresses if t != "IPAddress"]
    eps = []
    if lb is None:
        if ips:
            eps.append(endpoint(hostname, ips, "A", "", ttl))
        if hosts:
            eps.append(endpoint(hostname, hosts, "CNAME", "", ttl))
    else:
        cname_host = hostname.replace("*.", "") if hostname.startswith("*") else hostname
        lb_name = f"klb.{cname_host}".lower()
        geo = lb["geo"]
        geo_lb = f"{geo}.{lb_name}".lower()
        if ips:
            a_name = f"{hash_len(lb['id'], 6)}-{hash_len(gateway[0] + '-' + gateway[1], 6)}.{lb_name}".lower()
            eps.append(endpoint(a_name, ips, "A", "", ttl))
            hosts = hosts + [a_name]
        for h in hosts:
            eps.append(endpoint(geo_lb, [h], "CNAME", h, ttl, [("weight", str(lb["weight"]))]))
        if eps:
            eps.append(endpoint(lb_name, [geo_lb], "CNAME", geo, lb_ttl, [("geo-code", geo)]))
            if lb.get("default"):
                eps.append(endpoint(lb_name, [geo_lb], "CNAME", "default", lb_ttl, [("geo-code", "*")]))
            eps.append(endpoint(hostname, [lb_name], "CNAME", "", lb_ttl))
    # sort.Slice by getSetID (not stable; the keys are unique here but for a name with several endpoints
    # and no setIdentifier, which the simple shape orders A before CNAME already)
    return sorted(eps, key=lambda e: e["dnsName"] + e.get("setIdentifier", ""))


def listener_record(gateway, listener, hostname, addresses, namespace, cluster_id, lb=None, delegate=False,
                    health=None, provider_ref="dns-provider-credentials-coredns", labels=None, created=None):
    """kuadrant-operator desiredDNSRecord."""
    rec = {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "DNSRecord",
        "metadata": {"name": f"{gateway}-{listener}", "namespace": namespace,
                     "labels": {"app.kubernetes.io/managed-by": "kuadrant-operator",
                                "kuadrant.io/listener-name": listener, **(labels or {})}},
        "spec": {"rootHost": hostname},
    }
    if created:
        rec["metadata"]["creationTimestamp"] = created
    if health:
        rec["spec"]["healthCheck"] = health
    if delegate:
        rec["spec"]["delegate"] = True
    else:
        rec["spec"]["providerRef"] = {"name": provider_ref}
    lb_for = dict(lb, id=cluster_id) if lb else None
    rec["spec"]["endpoints"] = build_endpoints(hostname, addresses, (gateway, namespace), lb_for)
    return rec


def registry_txt(ep, owner):
    """registry.generateTXTRecord for one endpoint."""
    name = ep["dnsName"]
    if name.startswith("*"):
        name = name.replace("*", "wildcard", 1)
    txt = {"dnsName": f"kuadrant-{hash_len(owner, 8)}-{ep['recordType'].lower()}-{name}",
           "recordType": "TXT",
           "targets": [f'"heritage=external-dns,external-dns/owner={owner},external-dns/version=1"']}
    if ep.get("setIdentifier"):
        txt["setIdentifier"] = ep["setIdentifier"]
    if ep.get("providerSpecific"):
        txt["providerSpecific"] = ep["providerSpecific"]
    return txt


def root_host(record):
    """DNSRecord.GetRootHost(): the rootHost without a leading "*."."""
    return record["spec"]["rootHost"].replace("*.", "", 1) if record["spec"]["rootHost"].startswith("*.") else \
        record["spec"]["rootHost"]


def authoritative_record(records, zone, status=None):
    """The authoritative record the endpoint provider writes for delegating records (all of one rootHost in
    one namespace): their endpoints merged (one endpoint per dnsName+setIdentifier, targets joined), a
    registry TXT beside each endpoint for each owner, labelled by the CoreDNS provider."""
    root = root_host(records[0])
    h = hash_len(root, 8)
    merged, order, txts = {}, [], []
    for r in records:
        owner = hash_len(r["metadata"]["namespace"] + "/" + r["metadata"]["name"], 8)
        for ep in r["spec"]["endpoints"]:
            key = (ep["dnsName"], ep.get("setIdentifier", ""), ep["recordType"])
            if key in merged:
                merged[key]["targets"] += [t for t in ep["targets"] if t not in merged[key]["targets"]]
            else:
                merged[key] = json.loads(json.dumps(ep))
                order.append(key)
            txts.append(registry_txt(ep, owner))
    eps = [merged[k] for k in order] + txts
    eps.sort(key=lambda e: e["dnsName"] + e.get("setIdentifier", ""))
    rec = {
        "apiVersion": "kuadrant.io/v1alpha1",
        "kind": "DNSRecord",
        "metadata": {"name": f"authoritative-record-{h}", "namespace": records[0]["metadata"]["namespace"],
                     "labels": {"kuadrant.io/authoritative-record": "true",
                                "kuadrant.io/authoritative-record-hash": h,
                                "kuadrant.io/dns-provider-name": "coredns",
                                "kuadrant.io/coredns-zone-name": zone}},
        "spec": {"rootHost": root, "providerRef": {"name": "dns-provider-credentials-coredns"}, "endpoints": eps},
    }
    if status:
        rec["status"] = status
    return rec


def status_016(group="", active="", generation=1, ready=True):
    """status as dns-operator 0.16/0.17 writes it (group, activeGroups, conditions)."""
    st = {"observedGeneration": generation, "ownerID": hash_len("owner", 8), "zoneID": "authoritative",
          "zoneDomainName": ZONE,
          "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                          "reason": "ProviderSuccess" if ready else "MemberOfInactiveGroup",
                          "message": "Provider ensured the dns record", "observedGeneration": generation,
                          "lastTransitionTime": "2026-11-30T10:00:00Z"}]}
    if group:
        st["group"] = group
    if active:
        st["activeGroups"] = active
    return st


# The clusters: (id, geo, default geo, weight, gateway addresses)
EU = ("eu-1", "GEO-EU", True, 120, [("IPAddress", "172.18.200.1"), ("IPAddress", "2001:db8:e0::1")])
US1 = ("us-1", "US", False, 120, [("IPAddress", "172.18.201.1")])
US2 = ("us-2", "US", False, 40, [("Hostname", "a1b2c3-us-2.elb.us-east-1.amazonaws.com")])
HEALTH = {"path": "/healthz", "port": 8443, "protocol": "HTTPS", "failureThreshold": 3, "interval": "10s"}


def lb_of(cluster):
    return {"weight": cluster[3], "geo": cluster[1], "default": cluster[2]}


def scenario_primary():
    """Three clusters' listener records for api.<zone> (delegate: true), merged by a Kuadrant primary into
    one authoritative record. The delegating records are there too, unlabelled: not served twice."""
    recs = [listener_record("api-gw", "api", f"api.{ZONE}", c[4], "toystore", c[0], lb_of(c), delegate=True,
                            health=HEALTH) for c in (EU, US1, US2)]
    for r, c in zip(recs, (EU, US1, US2)):
        r["metadata"]["name"] += "-" + c[0]  # the primary holds each cluster's copy under its own name
    return recs + [authoritative_record(recs, ZONE, status_016())]


def scenario_two_gateways():
    """One cluster (eu-1), two Gateways with a listener for the same host: IE with IPs, US with an ELB
    name. dns-operator >= 0.15 merges both into one authoritative record."""
    ie = listener_record("ie-gw", "shop", f"shop.{ZONE}", [("IPAddress", "172.18.210.1")], "shop", "eu-1",
                         {"weight": 100, "geo": "IE", "default": True})
    us = listener_record("us-gw", "shop", f"shop.{ZONE}", [("Hostname", "shop-us.elb.us-east-1.amazonaws.com")],
                         "shop", "eu-1", {"weight": 100, "geo": "US", "default": False})
    return [authoritative_record([ie, us], ZONE)]


def scenario_wildcard():
    """A wildcard listener (*.apps.<zone>) and one for apps.<zone>: one authoritative record, rootHost
    apps.<zone> (GetRootHost drops "*."), both names sharing the klb chain."""
    w = listener_record("apps-gw", "wild", f"*.apps.{ZONE}", EU[4], "apps", "eu-1", lb_of(EU))
    a = listener_record("apps-gw", "apex", f"apps.{ZONE}", EU[4], "apps", "eu-1", lb_of(EU))
    return [authoritative_record([w, a], ZONE)]


def scenario_simple():
    """A DNSPolicy without loadBalancing: A records for the gateway's IPs, a CNAME for a host name."""
    ip = listener_record("www-gw", "www", f"www.{ZONE}", [("IPAddress", "172.18.220.1"), ("IPAddress", "172.18.220.2")],
                         "web", "eu-1")
    name = listener_record("docs-gw", "docs", f"docs.{ZONE}", [("Hostname", "docs-lb.example.org")], "web", "eu-1")
    return [authoritative_record([ip], ZONE), authoritative_record([name], ZONE)]


def scenario_geo_plain():
    """The CoreDNS plugin README's second example: geo-code on plain A records, labelled by hand."""
    return [{
        "apiVersion": "kuadrant.io/v1alpha1", "kind": "DNSRecord",
        "metadata": {"name": "geo-plain", "namespace": "geo", "labels": {"kuadrant.io/coredns-zone-name": ZONE}},
        "spec": {"rootHost": f"plain.{ZONE}", "endpoints": [
            endpoint(f"plain.{ZONE}", ["192.0.2.11"], "A", "GEO-EU", 300, [("geo-code", "GEO-EU")]),
            endpoint(f"plain.{ZONE}", ["192.0.2.22"], "A", "GEO-NA", 300, [("geo-code", "GEO-NA")]),
        ]}}]


def scenario_ns_txt():
    """NS (a delegation below the zone, with glue) and TXT endpoints, written by hand, labelled."""
    return [{
        "apiVersion": "kuadrant.io/v1alpha1", "kind": "DNSRecord",
        "metadata": {"name": "team-sub", "namespace": "team", "labels": {"kuadrant.io/coredns-zone-name": ZONE}},
        "spec": {"rootHost": f"team.{ZONE}", "endpoints": [
            endpoint(f"sub.team.{ZONE}", [f"ns1.sub.team.{ZONE}", "ns.elsewhere.example.org"], "NS", "", 300),
            endpoint(f"ns1.sub.team.{ZONE}", ["192.0.2.53"], "A", "", 300),
            endpoint(f"_acme-challenge.team.{ZONE}", ["token-1234"], "TXT", "", 120),
            endpoint(f"team.{ZONE}", ["v=spf1 -all"], "TXT", "", 300),
        ]}}]


def scenario_zone_setup(nameservers):
    """The zone set-up record dns-operator >= 0.16 documents (apex NS, nsN glue) merged, as a CoreDNS
    provider record of rootHost <zone>, into the authoritative record that a *.<zone> listener shares."""
    setup = {
        "apiVersion": "kuadrant.io/v1alpha1", "kind": "DNSRecord",
        "metadata": {"name": "dnsrecord-zone-config", "namespace": "kuadrant-coredns"},
        "spec": {"rootHost": ZONE, "providerRef": {"name": "dns-provider-credentials-coredns"}, "endpoints":
                 [endpoint(ZONE, [n for n, _ in nameservers], "NS", "", 60)] +
                 [endpoint(n, [a], "A", "", 60) for n, a in nameservers]}}
    star = listener_record("edge-gw", "star", f"*.{ZONE}", [("IPAddress", "172.18.230.1")], "kuadrant-coredns", "eu-1")
    return [authoritative_record([setup, star], ZONE)]


def scenario_active_groups():
    """The kuadrant-active-groups TXT record, labelled by hand (docs/coredns/configuration.md)."""
    return [{
        "apiVersion": "kuadrant.io/v1alpha1", "kind": "DNSRecord",
        "metadata": {"name": "kuadrant-active-groups", "namespace": "kuadrant-coredns",
                     "labels": {"kuadrant.io/coredns-zone-name": ZONE}},
        "spec": {"rootHost": f"kuadrant-active-groups.{ZONE}", "endpoints": [
            endpoint(f"kuadrant-active-groups.{ZONE}", ["version=1;groups=primary-eu&&primary-us"], "TXT", "", 60)]}}]


def scenario_second_zone():
    """A record of glbd's second zone."""
    r = listener_record("net-gw", "api", f"api.{OTHER_ZONE}", US1[4], "net", "us-1", lb_of(US1))
    return [authoritative_record([r], OTHER_ZONE)]


def scenario_two_namespaces():
    """The same host from two namespaces: the older record keeps it (unless kubernetes.owners shares it)."""
    old = listener_record("pay-gw", "pay", f"pay.{ZONE}", [("IPAddress", "172.18.240.1")], "payments", "eu-1")
    new = listener_record("evil-gw", "pay", f"pay.{ZONE}", [("IPAddress", "172.18.240.66")], "intruder", "eu-1")
    a, b = authoritative_record([old], ZONE), authoritative_record([new], ZONE)
    a["metadata"]["creationTimestamp"] = "2026-11-01T10:00:00Z"
    b["metadata"]["creationTimestamp"] = "2026-12-01T10:00:00Z"
    return [a, b]


def scenario_v014():
    """dns-operator 0.14: the CoreDNS provider labelled each listener's record itself (no authoritative
    record, no registry TXT in the spec)."""
    r = listener_record("legacy-gw", "legacy", f"legacy.{ZONE}", US1[4], "legacy", "us-1", lb_of(US1),
                        labels={"kuadrant.io/coredns-zone-name": ZONE, "kuadrant.io/dns-provider-name": "coredns"})
    return [r]


def scenario_status():
    """0.16/0.17 status fields (group, activeGroups, conditions) on an authoritative record."""
    r = listener_record("grp-gw", "grp", f"grp.{ZONE}", EU[4], "grp", "eu-1", lb_of(EU))
    return [authoritative_record([r], ZONE, status_016(group="primary-eu", active="primary-eu&&primary-us",
                                                       generation=3))]


SCENARIOS = {
    "primary-three-clusters": scenario_primary,
    "two-gateways": scenario_two_gateways,
    "wildcard": scenario_wildcard,
    "simple": scenario_simple,
    "geo-plain": scenario_geo_plain,
    "ns-txt": scenario_ns_txt,
    "zone-setup-matching": lambda: scenario_zone_setup([(f"ns1.{ZONE}", "127.0.0.1"), (f"ns2.{ZONE}", "127.0.0.2")]),
    "zone-setup-other": lambda: scenario_zone_setup([(f"ns1.{ZONE}", "198.51.100.9")]),
    "active-groups": scenario_active_groups,
    "second-zone": scenario_second_zone,
    "two-namespaces": scenario_two_namespaces,
    "v014-labelled": scenario_v014,
    "status-016": scenario_status,
}


def render(fn):
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": fn()}, indent=1, sort_keys=False) + "\n"


def main():
    args = sys.argv[1:]
    check = args[:1] == ["--check"]
    out = args[-1]
    bad = 0
    for name, fn in SCENARIOS.items():
        path = os.path.join(out, name + ".json")
        text = render(fn)
        if check:
            try:
                with open(path) as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            if not same:
                print(f"{path}: differs from what kuadrant_records.py writes", file=sys.stderr)
                bad = 1
        else:
            with open(path, "w") as f:
                f.write(text)
    sys.exit(bad)


if __name__ == "__main__":
    main()
