#!/usr/bin/env python3
"""The test suite's own gates, read from ctest's list of the tests (ctest --show-only=json-v1): every test has a
TIMEOUT (a hang ends as a failure, not as CI's 90 minutes), and every system test a COST (ctest -j starts the
costliest first). Usage: test-gates.py CTEST BUILD_DIR"""
import json
import subprocess
import sys

ctest, build = sys.argv[1], sys.argv[2]
listing = json.loads(subprocess.run([ctest, "--show-only=json-v1", "--test-dir", build], check=True,
                                    capture_output=True, text=True).stdout)
problems = []
for t in listing["tests"]:
    props = {p["name"]: p["value"] for p in t.get("properties", [])}
    if not props.get("TIMEOUT"):
        problems.append(f"{t['name']}: no TIMEOUT")
    if t["name"].startswith("system.") and not props.get("COST"):
        problems.append(f"{t['name']}: no COST")
for p in problems:
    print(p)
print(f"{len(listing['tests'])} tests, {len(problems)} without a timeout or (system tests) a cost")
sys.exit(1 if problems or not listing["tests"] else 0)
