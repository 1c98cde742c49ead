#!/usr/bin/env python3
"""The docs' stated facts, checked against the program: a fact is a sentence of a doc (found by a pattern, so a
doc that stops saying it fails here too) whose numbers or words are compared with what glbd does, against one
`glbd demo` or a glbd of its own on loopback. These are the facts that drifted once (docs/*.md said one thing,
the code did another): the state file's format, the admin endpoint's connections per source, the SOA serial,
`glbd probe`'s default path, and what a first failed probe does whatever failureThreshold says.

Usage: docs-facts.py GLBD SOURCE_DIR WORK_DIR   (prints one line per fact; exit 1 when one does not hold)
"""
import http.server
import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("docs_test", os.path.join(HERE, "docs-test.py"))
docs_test = importlib.util.module_from_spec(spec)
spec.loader.exec_module(docs_test)


class Fact(Exception):
    """A fact that does not hold: what the doc says and what glbd does."""


def stated(source, doc, pattern):
    """The match of PATTERN in DOC (its groups are the stated values); fails when the doc no longer says it."""
    text = " ".join(open(os.path.join(source, doc)).read().split())
    m = re.search(pattern, text)
    if not m:
        raise Fact(f"{doc} no longer states /{pattern}/: update this check with the doc")
    return m


def wait_until(seconds, predicate):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def dig(server, name, qtype, *extra):
    p = subprocess.run(["dig", f"@{server}", "-p", "5300", "+short", "+time=2", "+tries=2", name, qtype, *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
    return p.stdout.split("\n")[0] if p.returncode == 0 else ""


def state_format(source, demo):
    m = stated(source, "docs/sync.md", r'The file is JSON: `\{"format": (\d+),')
    folder = re.search(r"Configs and logs: (\S+)\.", demo.banner).group(1)
    path = os.path.join(folder, "state-ie", "state.json")
    if not wait_until(20, lambda: os.path.exists(path)):
        raise Fact(f"the demo wrote no {path}")
    written = json.load(open(path))["format"]
    if written != int(m.group(1)):
        raise Fact(f"docs/sync.md says format {m.group(1)}, glbd writes {written}")
    return f"docs/sync.md: the state file is format {written}, as glbd writes it"


def admin_connections(source, demo):
    m = stated(source, "docs/security.md", r"One source may hold at most (\d+) of the endpoint's (\d+) connections")
    per_source = int(m.group(1))
    stated(source, "docs/security.md", rf"{m.group(2)} connections, \d+ of them only for loopback clients "
                                       rf"[^,]*, {per_source} per client address")
    # Connections that send nothing: glbd keeps `per_source` of them from one address; one more closes the oldest.
    held = []
    try:
        for _ in range(per_source):
            s = socket.create_connection(("127.0.0.11", 9153), timeout=5)
            held.append(s)
        time.sleep(0.5)

        def closed(s):
            s.settimeout(0.05)
            try:
                return s.recv(1) == b""
            except socket.timeout:
                return False
            except OSError:
                return True
        if any(closed(s) for s in held):
            raise Fact(f"docs/security.md says {per_source} per source; glbd closed one of {per_source}")
        held.append(socket.create_connection(("127.0.0.11", 9153), timeout=5))
        if not wait_until(5, lambda: closed(held[0])):
            raise Fact(f"docs/security.md says {per_source} per source; glbd kept {per_source + 1}")
        if any(closed(s) for s in held[1:]):
            raise Fact("more than the oldest connection was closed")
    finally:
        for s in held:
            s.close()
    return f"docs/security.md: one source holds {per_source} admin connections, one more closes its oldest"


def soa_serial(source, demo):
    stated(source, "docs/config.md", r"serial: managed by glbd: it follows the global view .* so servers holding "
                                     r"the same view give the same serial; # it never goes back")
    servers = ["127.0.0.11", "127.0.0.12", "127.0.0.13"]
    serials = {}

    def agree():
        for s in servers:
            soa = dig(s, "glb.example.test", "SOA").split()
            serials[s] = soa[2] if len(soa) == 7 else None
        return None not in serials.values() and len(set(serials.values())) == 1
    if not wait_until(20, agree):
        raise Fact(f"docs/config.md says servers of one view give one serial; the demo's give {serials}")
    return f"docs/config.md: the demo's three servers give one SOA serial ({serials['127.0.0.11']})"


class Recorder(http.server.BaseHTTPRequestHandler):
    paths = []

    def do_GET(self):
        type(self).paths.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


def probe_path(source, glbd):
    doc = stated(source, "docs/config.md", r"`glbd probe \[--admin HOST:PORT\] \[--path P\]` exits 0 when the path "
                                           r"answers 200 \(default `(/\w+)`")
    usage = subprocess.run([glbd, "--help"], stdout=subprocess.PIPE, text=True).stdout
    help_path = re.search(r"glbd probe \[--admin H:P\] \[--path (/\w+)\]", usage)
    server = http.server.HTTPServer(("127.0.0.14", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        rc = subprocess.run([glbd, "probe", "--admin", f"127.0.0.14:{server.server_port}"], timeout=20).returncode
    finally:
        server.shutdown()
    if rc != 0 or Recorder.paths != [doc.group(1)] or not help_path or help_path.group(1) != doc.group(1):
        raise Fact(f"docs/config.md says {doc.group(1)}, --help {help_path and help_path.group(1)}; "
                   f"glbd probe asked for {Recorder.paths} (exit {rc})")
    return f"docs/config.md and --help: glbd probe asks for {doc.group(1)} by default"


def first_probe(source, glbd, work):
    stated(source, "docs/kuadrant.md", r"the first result decides at once")
    stated(source, "docs/config.md", r"failureThreshold: 3 # failures in a row to go down; the first result decides "
                                     r"at once")
    # Two endpoints, failureThreshold 3, a round an hour: one answers, nothing listens at the other. After the
    # first round only the one that answered is served.
    class Target(Recorder):
        paths = []
    up = http.server.HTTPServer(("127.0.0.15", 0), Target)
    threading.Thread(target=up.serve_forever, daemon=True).start()
    config = os.path.join(work, "facts.yaml")
    with open(config, "w") as f:
        f.write(f"""cluster: {{id: facts}}
listen: {{dns: ["127.0.0.15:5301"]}}
rateLimit: {{responsesPerSecond: 0}}
zones:
  - origin: facts.test
    nameservers: [{{name: ns1.facts.test, addresses: [192.0.2.53]}}]
hosts:
  - name: app.facts.test
    endpoints: [127.0.0.15, 127.0.0.16]
    healthCheck: {{protocol: HTTP, port: {up.server_port}, path: /, interval: 1h, timeout: 1s,
                  failureThreshold: 3}}
""")
    with open(os.path.join(work, "facts.log"), "w") as log:
        server = subprocess.Popen([glbd, "serve", config], stdout=log, stderr=subprocess.STDOUT)
    try:
        def answers():
            p = subprocess.run(["dig", "@127.0.0.15", "-p", "5301", "+short", "+time=1", "+tries=1", "app.facts.test",
                                "A"], stdout=subprocess.PIPE, text=True, timeout=10)
            return sorted(p.stdout.split())
        if not wait_until(30, lambda: answers() == ["127.0.0.15"]):
            raise Fact(f"after one failed probe (failureThreshold 3) glbd answers {answers()}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        up.shutdown()
    return "docs/kuadrant.md, config.md: one failed first probe takes an endpoint out, whatever failureThreshold says"


def main():
    glbd, source, work = (os.path.abspath(x) for x in sys.argv[1:4])
    os.makedirs(os.path.join(work, "bin"), exist_ok=True)
    link = os.path.join(work, "bin", "glbd")
    if not os.path.lexists(link):
        os.symlink(glbd, link)
    os.environ["PATH"] = os.path.join(work, "bin") + ":" + os.environ["PATH"]
    failures = []

    def check(fact, *args):
        try:
            print("fact holds: " + fact(*args))
        except (Fact, OSError, subprocess.SubprocessError) as e:
            failures.append(f"{fact.__name__}: {e}")
            print(f"FACT FAILS: {fact.__name__}: {e}")
    check(probe_path, source, glbd)
    check(first_probe, source, glbd, work)
    demo = docs_test.Demo(work)
    try:
        for fact in (state_format, admin_connections, soa_serial):
            check(fact, source, demo)
    finally:
        demo.stop()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
