#!/usr/bin/env python3
"""A TCP proxy for the system tests: a link between two servers that the test can cut from outside.

    tcpproxy.py LISTEN_ADDR:PORT TARGET_ADDR:PORT READY_FILE

Forwards every connection to TARGET. READY_FILE is written once it listens. SIGTERM closes the listener
and every connection at once: the link is cut, and new connections are refused. Runs until killed.
"""
import selectors
import signal
import socket
import sys


def split(addr):
    host, _, port = addr.rpartition(":")
    return host.strip("[]"), int(port)


def main():
    listen, target, ready = split(sys.argv[1]), split(sys.argv[2]), sys.argv[3]
    server = socket.create_server(listen, reuse_port=False)
    server.setblocking(False)
    sel = selectors.DefaultSelector()
    sel.register(server, selectors.EVENT_READ, None)
    peer = {}  # socket -> the socket it forwards to
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    open(ready, "w").close()

    def drop(s):
        for x in (s, peer.pop(s, None)):
            if x is None:
                continue
            peer.pop(x, None)
            try:
                sel.unregister(x)
            except (KeyError, ValueError):
                pass
            x.close()

    while True:
        for key, _ in sel.select():
            s = key.fileobj
            if s is server:
                client, _ = server.accept()
                try:
                    upstream = socket.create_connection(target, timeout=2)
                except OSError:
                    client.close()
                    continue
                for x in (client, upstream):
                    x.setblocking(True)
                    x.settimeout(5)
                peer[client], peer[upstream] = upstream, client
                sel.register(client, selectors.EVENT_READ, None)
                sel.register(upstream, selectors.EVENT_READ, None)
                continue
            try:
                data = s.recv(65536)
                if data:
                    peer[s].sendall(data)
                    continue
            except (OSError, KeyError):
                pass
            drop(s)


if __name__ == "__main__":
    main()
