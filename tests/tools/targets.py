#!/usr/bin/env python3
"""Health-check targets for the tests: real HTTP, HTTPS and TCP servers on loopback addresses.

    targets.py --http ADDR:PORT --http11 ADDR:PORT --https ADDR:PORT --cert C --key K --tcp ADDR:PORT
               --log FILE --ready FILE

--http and --https answer HTTP/1.0 and close the connection after each request; --http11 answers HTTP/1.1
and keeps it open for the next (as Envoy and most servers do).

HTTP(S) paths:  /healthz -> 200   /status/NNN -> NNN   /hang -> accepts and never answers
                /created -> 201   anything else -> 404
Every request is appended to --log as a JSON line: {"proto", "path", "host", "sni", "peer", "source", "port",
"listener", "headers"} (peer: the client's port, which tells connections apart; source: the client's address;
port and listener: the listener's); every TCP connection as {"proto": "tcp", "source", "port"}.
--ready is written once every listener is bound. Runs until killed.
"""
import argparse
import json
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()


def split(addr):
    host, _, port = addr.rpartition(":")
    return host.strip("[]"), int(port)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def do_GET(self):
        record = {
            "proto": "https" if isinstance(self.connection, ssl.SSLSocket) else "http",
            "path": self.path,
            "host": self.headers.get("Host"),
            "sni": getattr(self.connection, "sni", None),
            "peer": self.client_address[1],
            "source": self.client_address[0],
            "listener": self.server.server_address[0],
            "port": self.server.server_address[1],
            "headers": {k: v for k, v in self.headers.items()},
        }
        with LOCK, open(self.server.log_path, "a") as f:
            f.write(json.dumps(record) + "\n")
        if self.path == "/hang":
            time.sleep(3600)
            return
        if self.path == "/healthz":
            code = 200
        elif self.path == "/created":
            code = 201
        elif self.path.startswith("/status/"):
            code = int(self.path.split("/")[2])
        else:
            code = 404
        body = b"ok\n"
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Handler11(Handler):
    protocol_version = "HTTP/1.1"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve_http(addr, log_path, tls=None, handler=Handler):
    host, port = split(addr)
    Server.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
    srv = Server((host, port), handler)
    srv.log_path = log_path
    if tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls[0], tls[1])

        # The name is kept on the connection's own socket: handshakes happen one after another in the
        # accepting thread, requests later in their own threads, so a name kept on the server was the
        # last handshake's, not always this request's.
        def sni(sock, name, _ctx):
            sock.sni = name

        ctx.sni_callback = sni
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    threading.Thread(target=srv.serve_forever, daemon=True).start()


def serve_tcp(addr, log_path):
    host, port = split(addr)
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((host, port))
    s.listen(64)

    def loop():
        while True:
            c, peer = s.accept()
            with LOCK, open(log_path, "a") as f:
                f.write(json.dumps({"proto": "tcp", "source": peer[0], "port": port}) + "\n")
            c.close()

    threading.Thread(target=loop, daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--http", action="append", default=[])
    ap.add_argument("--http11", action="append", default=[])
    ap.add_argument("--https", action="append", default=[])
    ap.add_argument("--tcp", action="append", default=[])
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--log", default="/dev/null")
    ap.add_argument("--ready")
    a = ap.parse_args()
    for addr in a.http:
        serve_http(addr, a.log)
    for addr in a.http11:
        serve_http(addr, a.log, handler=Handler11)
    for addr in a.https:
        serve_http(addr, a.log, (a.cert, a.key))
    for addr in a.tcp:
        serve_tcp(addr, a.log)
    if a.ready:
        with open(a.ready, "w") as f:
            f.write("ready\n")
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
