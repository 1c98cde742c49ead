#!/usr/bin/env python3
"""Asks N servers (PREFIX1..PREFIXN, one UDP socket, every 5 ms or --every MS) for NAME (A, with EDNS) until each answers as
wanted: WANT a number (that many addresses), "any" (an address at all), an address (it is among them), or with
--absent an address (it is not, and the answer is not empty). Prints the milliseconds from the moment written in file GO (epoch ms)
until the last server did, or exits 1 after LIMIT ms. It creates GO.ready once set up and then waits for GO,
so that Python's own start is not part of the figure (bench/sync-converge.sh, bench/sync-loss.sh).
With --progress FILE it also writes, every 500 ms, the ms since GO and how many addresses all servers answer
in all (their last answers): the course of a convergence, not only its end.
With --first K the servers are PREFIXK..PREFIX(K+N-1). With --heard URL COUNT it also waits until URL (a server's
/metrics) lists COUNT series of glbd_sync_last_heard_seconds, the origins the server has heard (bench/scale.sh:
a node started empty has learnt the whole view).
A server whose answer comes truncated (more addresses than glbd's UDP payload holds: about 70 clusters) is
asked over TCP from then on, once every 50 ms (32 at a time), so that a fleet of 100 is judged on whole answers.
The poller shares the machine with the fleet it times, so its rounds are cheap: an answer is read in full
only when its header's answer count (or, for an address wanted, the address's four bytes anywhere in it) says
it may be the one wanted (reading every answer of 50 addresses from 50 servers every 5 ms took 1.0-1.2 s of
CPU in 3 s, a sixth of two cores that the servers' convergence then waited for; now 0.4 s). A figure of
seconds is asked for less often (--every 20: a fiftieth of its resolution) than one of 100 ms.
   fleet-wait.py N NAME WANT LIMIT_MS GO PORT [--prefix 127.0.2.] [--absent] [--source ADDR] [--progress FILE]
                 [--every MS] [--first K] [--heard URL COUNT]
"""
import argparse, concurrent.futures, socket, struct, sys, time, urllib.request

p = argparse.ArgumentParser()
for a in ("n", "name", "want", "limit", "go", "port"):
    p.add_argument(a)
p.add_argument("--prefix", default="127.0.2.")
p.add_argument("--absent", action="store_true")
p.add_argument("--source", default="")
p.add_argument("--progress", default="")
p.add_argument("--every", type=float, default=5)
p.add_argument("--first", type=int, default=1)
p.add_argument("--heard", nargs=2, metavar=("URL", "COUNT"), default=None)
o = p.parse_args()
n, limit, port = int(o.n), int(o.limit), int(o.port)
q = b"".join(bytes([len(l)]) + l.encode() for l in o.name.split(".")) + b"\0"


def addresses(msg):
    count, at = struct.unpack("!H", msg[6:8])[0], 12 + len(q) + 4
    out = []
    for _ in range(count):
        while msg[at] and msg[at] < 0xC0:
            at += msg[at] + 1
        at += 2 if msg[at] >= 0xC0 else 1
        rtype, _, _, rdlen = struct.unpack("!HHIH", msg[at:at + 10])
        at += 10
        if rtype == 1 and rdlen == 4:
            out.append(socket.inet_ntoa(msg[at:at + 4]))
        at += rdlen
    return out


def query(qid):
    # With EDNS (4096 bytes): without it, from 30 clusters the answer would not fit in 512 and truncate.
    return struct.pack("!HHHHHH", qid, 0, 1, 0, 0, 1) + q + b"\0\1\0\1" + b"\0\0\x29\x10\0\0\0\0\0\0\0"


def tcp_addresses(addr):
    """The addresses of one answer over TCP, or None when the server did not give one within a second."""
    try:
        with socket.create_connection((addr, port), timeout=1,
                                      source_address=(o.source, 0) if o.source else None) as t:
            m = query(1)
            t.sendall(struct.pack("!H", len(m)) + m)
            buf = b""
            while len(buf) < 2 or len(buf) < 2 + struct.unpack("!H", buf[:2])[0]:
                chunk = t.recv(65536)
                if not chunk:
                    return None
                buf += chunk
            return addresses(buf[2:])
    except (OSError, struct.error, IndexError):
        return None


def heard_all():
    """Whether --heard's server lists its COUNT origins heard (True without --heard)."""
    if not o.heard:
        return True
    try:
        with urllib.request.urlopen(o.heard[0], timeout=1) as r:
            text = r.read().decode()
    except OSError:
        return False
    return sum(line.startswith("glbd_sync_last_heard_seconds{") for line in text.splitlines()) >= int(o.heard[1])


def done(a):
    if o.absent:
        return bool(a) and o.want not in a
    if o.want == "any":
        return bool(a)
    return (o.want in a) if "." in o.want else len(a) == int(o.want)


def maybe_done(msg):
    """False when `msg` cannot be an answer done() accepts, without reading its records (the poller's rounds
    stay cheap); True when it has to be read."""
    if o.absent:
        return True
    if "." in o.want:
        return want_bytes in msg
    return struct.unpack("!H", msg[6:8])[0] >= want_count


want_bytes = socket.inet_aton(o.want) if "." in o.want and not o.absent else b""
want_count = 1 if o.want == "any" else 0 if "." in o.want else int(o.want)


s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if o.source:
    s.bind((o.source, 0))
s.setblocking(False)
open(o.go + ".ready", "w").close()
for _ in range(60000):  # the action begins within a minute
    try:
        since = int(open(o.go).read())
        break
    except (OSError, ValueError):
        time.sleep(0.001)
else:
    sys.exit(1)
left, qid = set(range(o.first, o.first + n)), 0
servers = {i: (f"{o.prefix}{i}", port) for i in left}
asked = bytearray(query(0))
seen, next_mark = {}, 500
over_tcp, tcp_at = set(), {}  # servers whose answers truncate, and when each was last asked over TCP
tcp_pool = concurrent.futures.ThreadPoolExecutor(max_workers=32)
progress = open(o.progress, "w") if o.progress else None
while left or not heard_all():
    if progress and time.time() * 1000 - since >= next_mark:
        progress.write(f"{next_mark} {sum(seen.values())}\n")
        next_mark += 500
    if time.time() * 1000 - since > limit:
        sys.exit(1)
    # Those asked over TCP all at once: one after another, a fleet whose TCP threads are busy serving transfers
    # (100 servers at a cold start) took a second each to time out, and the round a minute and more.
    now = time.time()
    due = [i for i in left if i in over_tcp and now - tcp_at.get(i, 0) >= 0.05]
    for i in due:
        tcp_at[i] = now
    for i, a in zip(due, tcp_pool.map(lambda i: tcp_addresses(f"{o.prefix}{i}"), due)):
        if a is not None:
            seen[f"{o.prefix}{i}"] = len(a)
            if done(a):
                left.discard(i)
    for i in list(left):
        if i in over_tcp:
            continue
        qid = (qid + 1) & 0xFFFF
        struct.pack_into("!H", asked, 0, qid)
        s.sendto(asked, servers[i])
    time.sleep(o.every / 1000)
    while True:
        try:
            msg, (addr, _) = s.recvfrom(4096)
        except BlockingIOError:
            break
        if not addr.startswith(o.prefix):
            continue
        if len(msg) > 3 and msg[2] & 0x02:  # TC: ask it over TCP from now on
            over_tcp.add(int(addr[len(o.prefix):]))
            continue
        if len(msg) < 12:
            continue
        if not maybe_done(msg):
            seen[addr] = struct.unpack("!H", msg[6:8])[0]  # (the progress: answer records, all addresses here)
            continue
        a = addresses(msg)
        seen[addr] = len(a)
        if done(a):
            left.discard(int(addr[len(o.prefix):]))
if progress:
    progress.close()
print(round(time.time() * 1000 - since))
