#!/usr/bin/env python3
"""A service manager's notify socket, for tests: binds a Unix datagram socket at PATH (as systemd's
NOTIFY_SOCKET) and appends every message to OUT as one line "MS STATE;STATE;..." (MS: a monotonic
millisecond clock, newlines of the message as ';'). Stops after SECONDS (default 300) or when killed.
Usage: notify-listen.py PATH OUT [SECONDS]"""
import os
import socket
import sys
import time

path, out = sys.argv[1], sys.argv[2]
limit = time.monotonic() + float(sys.argv[3] if len(sys.argv) > 3 else 300)
if os.path.exists(path):
    os.unlink(path)
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)  # glbd may have dropped privileges, as systemd's socket is writable by all
with open(out, "a", buffering=1) as f:
    while time.monotonic() < limit:
        s.settimeout(max(0.1, limit - time.monotonic()))
        try:
            msg = s.recv(4096)
        except socket.timeout:
            continue
        f.write(f"{int(time.monotonic() * 1000)} {msg.decode(errors='replace').strip().replace(chr(10), ';')}\n")
