#!/usr/bin/env python3
"""Checks Prometheus text exposition (format 0.0.4) strictly enough to catch what a scraper rejects:
every sample belongs to a family declared with HELP and TYPE, names and labels are well formed, values
parse, histogram buckets are cumulative and end with +Inf equal to _count.
    promcheck.py FILE [NAME=MIN ...]   -> prints the number of samples; exit 1 on a problem
A NAME=MIN argument ("glbd_queries_total{transport=\\"udp\\",rcode=\\"NOERROR\\"}=10") also checks a value."""
import re
import sys

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(rf"^({NAME})(\{{(?:{LABEL})(?:,{LABEL})*\}})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$")


def fail(msg):
    print("promcheck: " + msg)
    sys.exit(1)


def main():
    text = open(sys.argv[1]).read()
    if not text.endswith("\n"):
        fail("no final newline")
    types, helps, values, buckets = {}, set(), {}, {}
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("# HELP "):
            helps.add(line.split()[2])
        elif line.startswith("# TYPE "):
            parts = line.split()
            if len(parts) != 4 or parts[3] not in ("counter", "gauge", "histogram", "summary", "untyped"):
                fail(f"line {n}: bad TYPE: {line}")
            if parts[2] in types:
                fail(f"line {n}: family {parts[2]} declared twice")
            types[parts[2]] = parts[3]
        elif line.startswith("#") or not line:
            continue
        else:
            m = SAMPLE.match(line)
            if not m:
                fail(f"line {n}: not a sample: {line}")
            name, labels, value = m.group(1), m.group(2) or "", m.group(3)
            family = re.sub(r"_(bucket|sum|count)$", "", name) if re.sub(r"_(bucket|sum|count)$", "", name) in types else name
            if family not in types or family not in helps:
                fail(f"line {n}: {name} has no TYPE/HELP")
            if types[family] == "counter" and float(value) < 0:
                fail(f"line {n}: negative counter")
            key = name + labels
            if key in values:
                fail(f"line {n}: duplicate sample {key}")
            values[key] = float(value)
            if name.endswith("_bucket"):
                buckets.setdefault(family, []).append(float(value))
    for fam, b in buckets.items():
        if b != sorted(b):
            fail(f"{fam}: buckets not cumulative")
        if b[-1] != values.get(fam + "_count"):
            fail(f"{fam}: +Inf bucket {b[-1]} != count {values.get(fam + '_count')}")
    for want in sys.argv[2:]:
        key, _, minimum = want.rpartition("=")
        if values.get(key, -1) < float(minimum):
            fail(f"{key} is {values.get(key)}, want >= {minimum}")
    print(f"{len(values)} samples in {len(types)} families")


main()
