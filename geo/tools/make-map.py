#!/usr/bin/env python3
"""Writes geo/world_outline.txt: the world's coastlines as SVG path data for the status page's map (served by
the admin endpoint at /, drawn with no external asset, so it works air-gapped).

Source: GSHHG, the Global Self-consistent Hierarchical High-resolution Geography (Wessel and Smith, LGPL-3+),
crude resolution, as Debian's gmt-gshhg-low ships it, read through GMT (`gmt coast -M`, Debian's gmt). Land
and lakes under 20,000 km2 are left out. Projection: equirectangular, 2 units per degree, x = (lon + 180) * 2,
y = (90 - lat) * 2 (the page's viewBox crops it to 84N..60S); points on the same half-degree are merged and
each coastline piece is written as a move and relative lines, so the file stays near 20 KB.
Run (needs gmt and gmt-gshhg-low, only here): python3 geo/tools/make-map.py > geo/world_outline.txt
"""
import subprocess
import sys
import tempfile

SCALE = 2  # units per degree
# GMT writes a gmt.history file where it runs: run it in a scratch directory.
with tempfile.TemporaryDirectory() as scratch:
    dump = subprocess.run(["gmt", "coast", "-Rd", "-Dc", "-W", "-M", "-A20000"], check=True, capture_output=True, text=True,
                          cwd=scratch)
pieces, current = [], None
for line in dump.stdout.splitlines():
    if line.startswith(">"):
        current = []
        pieces.append(current)
        continue
    lon, lat = map(float, line.split()[:2])
    point = (round((lon + 180) * SCALE), round((90 - lat) * SCALE))
    if not current or current[-1] != point:
        current.append(point)

out = []
for points in pieces:
    if len(points) < 2:
        continue
    path = "M%d,%dl" % points[0]
    px, py = points[0]
    for i, (x, y) in enumerate(points[1:]):
        dx, dy = x - px, y - py
        px, py = x, y
        # Numbers need a separator unless the next one starts with its minus sign.
        path += ("" if i == 0 or dx < 0 else " ") + str(dx) + ("" if dy < 0 else ",") + str(dy)
    out.append(path)
sys.stdout.write("".join(out) + "\n")
