#!/usr/bin/env python3
"""The docs test: runs the command blocks of README.md and docs/*.md and compares the output they show.

A command block is a fenced block whose info string is sh, bash or console, or whose first line starts
with "$ ". Each one is marked, on the line right before it (blank lines between are allowed):

  <!-- docs-test: demo -->      run against a fresh `glbd demo` (127.0.0.11-13:5300, admin :9153)
  <!-- docs-test: scratch -->   run in an empty directory, no server
  <!-- docs-test: kube, needs kubectl -->  in an empty directory, with KUBECONFIG naming two test API servers
                                (tools/fakekube.py, serving DNSRecords) as the contexts kind-eu-1 and kind-us-1
  <!-- docs-test: MODE, needs TOOL -->  as MODE where TOOL is installed (kubectl), else reported as skipped
  <!-- docs-test: not run: REASON -->          not run here, with the reason

or the page says once `<!-- docs-test: no command of this page is run: REASON -->`. The marks are HTML
comments: a reader of the rendered page sees the guide, not the test's bookkeeping.
An unmarked command block is an error, so a new block cannot slip past the test.

A block with "$ " lines is a transcript: each "$ command" is run and its output compared with the lines
that follow it, after masking what changes from run to run: ages ("0.3s ago"), numbers of seven or more
digits (serials, versions), the counters after an age on the same line (a peer's exchanges and
failures) and the values of Prometheus counters; runs of spaces count as one. Any other block is a script,
run by bash -e: every command must succeed and none may print a DNS client's error (a failed transfer, no
server, SERVFAIL or REFUSED). Placeholders that the demo's banner fills: <pid of CLUSTER>, <secret>.

Commands run in a scratch directory where build/glbd (and glbd on PATH) is the binary under test and
docker/ is the source tree's (for manifests).
Usage: docs-test.py GLBD SOURCE_DIR WORK_DIR [FILE.md ...]  (the files default to README.md and docs/*.md)
"""
import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

CLIENT_ERROR = re.compile(r"Transfer failed|communications error|timed out|no servers could be reached|"
                          r"status: (SERVFAIL|REFUSED|FORMERR|NOTAUTH|NOTIMP)|couldn't get address")
RUN_MARK = re.compile(r"^<!-- docs-test: (demo|scratch|kube)(?:, needs ([\w-]+))? -->$")
SKIP_MARK = re.compile(r"^<!-- docs-test: not run: \S.* -->$")
PAGE_SKIP = re.compile(r"^<!-- docs-test: no command of this page is run: \S.* -->$")
COMMAND_INFO = {"sh", "bash", "console"}


class Block:
    def __init__(self, path, line, info, lines, mode, needs=None):
        self.path, self.line, self.info, self.lines, self.mode, self.needs = path, line, info, lines, mode, needs

    def where(self):
        return f"{self.path}:{self.line}"


def blocks_of(path, text):
    """Every command block of a Markdown file with its mode (demo, scratch, skip); raises on an unmarked one."""
    lines = text.split("\n")
    page_skip = any(PAGE_SKIP.match(x) for x in lines)
    out, errors, i = [], [], 0
    while i < len(lines):
        m = re.match(r"^```(\S*)", lines[i])
        if not m:
            i += 1
            continue
        start, info = i, m.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = lines[i + 1:j]
        i = j + 1
        first = next((x for x in body if x.strip()), "")
        if info not in COMMAND_INFO and not first.startswith("$ "):
            continue
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        before = lines[k] if k >= 0 else ""
        run = RUN_MARK.match(before)
        if run and page_skip:
            errors.append(f"{path}:{start + 1}: marked to run on a page whose commands are not run")
        elif run:
            out.append(Block(path, start + 1, info, body, run.group(1), run.group(2)))
        elif SKIP_MARK.match(before) or page_skip:
            out.append(Block(path, start + 1, info, body, "skip"))
        else:
            errors.append(f"{path}:{start + 1}: a command block without a docs-test mark (see {sys.argv[0]})")
    return out, errors


def mask(line):
    line = re.sub(r"\b\d+(\.\d+)?(us|ms|s|m|h) ago\b", "<age>", line)
    line = re.sub(r"\b\d{7,}\b", "<n>", line)
    if "<age>" in line:
        head, tail = line.split("<age>", 1)
        line = head + "<age>" + re.sub(r"(?<![\w.:/])\d+(?![\w.:/])", "<count>", tail)
    line = re.sub(r"^(glbd_\w+_total(\{[^}]*\})?) [0-9.e+-]+$", r"\1 <value>", line)
    return " ".join(line.split())


def transcript(body):
    """[(command, [expected lines])] from a block of "$ " lines and their output."""
    steps = []
    for x in body:
        if x.startswith("$ "):
            steps.append((x[2:], []))
        elif steps:
            steps[-1][1].append(x)
    return steps


class Demo:
    def __init__(self, work):
        self.log = os.path.join(work, "demo.log")
        with open(self.log, "w") as f:
            self.proc = subprocess.Popen(["glbd", "demo"], cwd=work, stdout=f, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            text = open(self.log).read()
            if "Stop with Ctrl-C" in text:
                self.banner = text
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise RuntimeError("the demo did not start:\n" + open(self.log).read())

    def wait_for_echoes(self, admin="127.0.0.11:9153", seconds=30):
        """Until every peer of the first server shows a round-trip time. `glbd status` prints `-` for a peer
        none of whose heartbeats has come back yet; the demo's start waits for the servers to agree, not for
        echoes, and under a sanitizer the first echo can come after that. Past the deadline the block runs
        anyway and its comparison says what differs."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://{admin}/v1/summary", timeout=5) as r:
                    peers = json.load(r).get("peers", [])
                if peers and all(p.get("rttMs") is not None for p in peers):
                    return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)

    def fill(self, command):
        for cluster, pid in re.findall(r"cluster (\w+) .*\(pid (\d+)\)", self.banner):
            command = command.replace(f"<pid of {cluster}>", pid)
        secret = re.search(r"hmac-sha256:glb-demo:(\S+)", self.banner)
        return command.replace("<secret>", secret.group(1)) if secret else command

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=40)  # the demo waits up to 25 s for its servers
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


class FakeClusters:
    """Two test API servers (tools/fakekube.py) named as kind names its clusters' contexts, for a doc's
    kubectl commands: kind-eu-1 at 127.0.0.17:6417, kind-us-1 at 127.0.0.18:6418 (plain HTTP, no token)."""
    SERVERS = {"kind-eu-1": ("127.0.0.17", 6417), "kind-us-1": ("127.0.0.18", 6418)}

    def __init__(self, work):
        fake = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fakekube.py")
        self.procs, self.kubeconfig = [], os.path.join(work, "kubeconfig")
        for name, (addr, port) in self.SERVERS.items():
            ready = os.path.join(work, name + ".ready")
            self.procs.append(subprocess.Popen([sys.executable, fake, addr, str(port), ready],
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            deadline = time.monotonic() + 20
            while not os.path.exists(ready) and time.monotonic() < deadline:
                time.sleep(0.05)
            if not os.path.exists(ready):
                self.stop()
                raise RuntimeError(f"the test API server {name} did not start")
        clusters = ", ".join(f'{{name: {n}, cluster: {{server: "http://{a}:{p}"}}}}' for n, (a, p) in self.SERVERS.items())
        contexts = ", ".join(f"{{name: {n}, context: {{cluster: {n}, user: doc}}}}" for n in self.SERVERS)
        with open(self.kubeconfig, "w") as f:
            f.write(f"apiVersion: v1\nkind: Config\nclusters: [{clusters}]\ncontexts: [{contexts}]\n"
                    f"users: [{{name: doc, user: {{}}}}]\ncurrent-context: kind-eu-1\n")

    def stop(self):
        for p in self.procs:
            p.terminate()
            p.wait(timeout=10)


def run(command, cwd, env):
    p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=cwd, env=env, timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def check(block, work, env):
    """Runs one block; returns a list of failures (empty when it holds)."""
    demo = Demo(work) if block.mode == "demo" else None
    fill = demo.fill if demo else (lambda c: c)
    failures = []
    kube = FakeClusters(work) if block.mode == "kube" else None
    if kube:
        env = dict(env, KUBECONFIG=kube.kubeconfig)
    if demo and any("glbd status" in x for x in block.lines):
        demo.wait_for_echoes()
    try:
        steps = transcript(block.lines)
        if not steps:
            rc, out = run(fill("\n".join(block.lines)), work, env)
            if rc != 0 or CLIENT_ERROR.search(out):
                failures.append(f"{block.where()}: the block failed (exit {rc}):\n{out}")
        for command, expected in steps:
            rc, out = run(fill(command), work, env)
            if rc != 0:
                failures.append(f"{block.where()}: `{command}` failed (exit {rc}):\n{out}")
                continue
            want = [mask(x) for x in expected]
            got = [mask(x) for x in out.rstrip("\n").split("\n")] if out.strip() else []
            while want and not want[-1]:
                want.pop()
            if want != got:
                diff = "\n".join(difflib.unified_diff(want, got, "the doc shows", "glbd printed", lineterm=""))
                failures.append(f"{block.where()}: `{command}` printed something else (masked):\n{diff}")
    finally:
        if kube:
            kube.stop()
        if demo:
            demo.stop()
            if demo.proc.returncode != 0:  # a sanitizer's report at exit, say
                failures.append(f"{block.where()}: the demo exited with {demo.proc.returncode}")
            if failures:  # what the demo said, for the cause
                failures.append(f"{block.where()}: the demo's output:\n" + open(demo.log).read()[-3000:])
    return failures


def main():
    glbd, source, work = (os.path.abspath(x) for x in sys.argv[1:4])
    files = sys.argv[4:] or ["README.md"] + sorted(
        os.path.join("docs", f) for f in os.listdir(os.path.join(source, "docs")) if f.endswith(".md"))
    bindir = os.path.join(work, "bin")
    os.makedirs(os.path.join(work, "build"), exist_ok=True)
    os.makedirs(bindir, exist_ok=True)
    for link in (os.path.join(work, "build", "glbd"), os.path.join(bindir, "glbd")):
        if not os.path.lexists(link):
            os.symlink(glbd, link)
    env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"])
    os.environ["PATH"] = env["PATH"]
    blocks, failures = [], []
    for f in files:
        path = f if os.path.isabs(f) else os.path.join(source, f)
        b, e = blocks_of(f, open(path).read())
        blocks += b
        failures += e
    counts = {"demo": 0, "scratch": 0, "kube": 0, "skip": 0, "no tool": 0}
    for n, block in enumerate(blocks):
        if block.needs and not shutil.which(block.needs):
            print(f"{block.where()}: {block.mode}, skipped: no {block.needs} here")
            counts["no tool"] += 1
            continue
        counts[block.mode] += 1
        if block.mode == "skip":
            continue
        scratch = os.path.join(work, f"block{n}")
        os.makedirs(scratch, exist_ok=True)
        for name in ("build", "bin"):
            os.symlink(os.path.join(work, name), os.path.join(scratch, name))
        os.symlink(os.path.join(source, "docker"), os.path.join(scratch, "docker"))
        started = time.monotonic()
        result = check(block, scratch, env)
        print(f"{block.where()}: {block.mode}, {'FAILED' if result else 'ok'} in {time.monotonic() - started:.1f} s")
        failures += result
    print(f"{len(blocks)} command blocks: {counts['demo']} run against the demo, {counts['scratch']} in a scratch "
          f"directory, {counts['kube']} against test API servers, {counts['skip']} marked as not run here, {counts['no tool']} skipped for a missing tool")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
