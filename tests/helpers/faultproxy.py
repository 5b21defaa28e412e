"""A fault-injecting HTTP proxy for the S3 test server: the faults a bucket shared by many machines meets.

    python tests/helpers/faultproxy.py --upstream http://127.0.0.1:5000 --port 5001 [--seed 0]

It forwards every request to `--upstream` and answers with the upstream's reply, except when a fault is
drawn for it (a seeded random draw per request, so a run's faults are reproducible):
- `slowdown`: answer 503 SlowDown without forwarding (S3's throttling reply; botocore retries it);
- `reset_before`: reset the connection without forwarding (the request never reached the store);
- `reset_after`: forward, let the store apply it, then reset the connection: the reply is lost, and the
  client's retry meets the request's own effect (a create-only PUT then finds its own object);
- `deny`: answer 403 AccessDenied without forwarding (a permanent error: wrong credentials, a policy);
- `latency_ms`: every forwarded request waits this long first.
`rules` inject one fault into the next `count` requests that match (`conditional`: a PUT with
If-None-Match or If-Match, the commit record's and the lease's writes), before the random draw.

The proxy is steered over HTTP on its own path, never forwarded: `POST /__faults__` with JSON
{"slowdown": 0.05, "reset_before": 0.03, "reset_after": 0.03, "latency_ms": 5,
 "rules": [{"match": "conditional", "fault": "reset_after", "count": 1}], "cut": false}
replaces the settings and zeroes the counters; `GET /__faults__` returns the counters
(requests, forwarded, and each fault injected). `cut: true` resets every connection, as a machine
that lost its network would see it.

    python tests/helpers/faultproxy.py --tcp ADMIN_PORT --upstream http://127.0.0.1:4200 --port 4201

forwards TCP instead (the Prefect API, websockets included), steered on ADMIN_PORT the same way; its
one fault is `cut`.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import socket
import struct
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

ADMIN = "/__faults__"
FAULTS = ("slowdown", "reset_before", "reset_after", "deny")
HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}
SLOWDOWN = (
    b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code>'
    b"<Message>Please reduce your request rate.</Message></Error>"
)
DENIED = b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>'


class Faults:
    """The proxy's settings and counters, shared by its handler threads."""

    def __init__(self, seed: int):
        self.lock = threading.Lock()
        self.rng = random.Random(seed)
        self.settings: dict = {}
        self.counts: dict[str, int] = {}
        self.configure({})

    def configure(self, settings: dict) -> None:
        with self.lock:
            self.settings = {"latency_ms": 0, "rules": [], "cut": False, **{f: 0.0 for f in FAULTS}, **settings}
            self.settings["rules"] = [dict(r) for r in self.settings["rules"]]
            self.counts = {"requests": 0, "forwarded": 0, **{f: 0 for f in FAULTS}}

    def draw(self, method: str, headers) -> str | None:
        """The fault for this request, or None; counted here."""
        conditional = method == "PUT" and ("If-None-Match" in headers or "If-Match" in headers)
        with self.lock:
            self.counts["requests"] += 1
            if self.settings["cut"]:
                fault = "reset_before"
            else:
                fault = None
                for rule in self.settings["rules"]:
                    if rule["count"] > 0 and (rule["match"] != "conditional" or conditional):
                        rule["count"] -= 1
                        fault = rule["fault"]
                        break
                if fault is None:
                    x = self.rng.random()
                    for f in FAULTS:
                        if x < self.settings[f]:
                            fault = f
                            break
                        x -= self.settings[f]
            if fault is not None:
                self.counts[fault] += 1
            return fault


def _reset(conn: socket.socket) -> None:
    """Close with a TCP reset (SO_LINGER 0), as a dropped connection looks to the client."""
    try:
        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        conn.close()
    except OSError:
        pass


def make_handler(upstream: str, faults: Faults) -> type[BaseHTTPRequestHandler]:
    host = urlsplit(upstream)

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 120  # an idle keep-alive connection is dropped after this: no thread waits forever

        def log_message(self, *args) -> None:  # quiet: the counters are the log
            pass

        def _body(self) -> bytes:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                out = bytearray()
                while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
                    out += self.rfile.read(size)
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return bytes(out)
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _reply(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
            self.send_response_only(status)
            head = self.command == "HEAD"  # a HEAD reply keeps the upstream's length and has no body
            for k, v in headers:
                if k.lower() not in HOP and (head or k.lower() != "content-length"):
                    self.send_header(k, v)
            if not head:
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _admin(self, body: bytes) -> None:
            if self.command == "POST":
                faults.configure(json.loads(body or b"{}"))
            with faults.lock:
                out = json.dumps(faults.counts).encode()
            self._reply(200, [("Content-Type", "application/json")], out)

        def _handle(self) -> None:
            body = self._body()
            if self.path == ADMIN:
                return self._admin(body)
            fault = faults.draw(self.command, self.headers)
            if fault == "reset_before":
                self.close_connection = True
                return _reset(self.connection)
            if fault == "slowdown":
                return self._reply(503, [("Content-Type", "application/xml")], SLOWDOWN)
            if fault == "deny":
                return self._reply(403, [("Content-Type", "application/xml")], DENIED)
            if faults.settings["latency_ms"]:
                time.sleep(faults.settings["latency_ms"] / 1000)
            up = http.client.HTTPConnection(host.hostname, host.port, timeout=600)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP}
                headers["Content-Length"] = str(len(body))
                up.request(self.command, self.path, body=body, headers=headers)
                res = up.getresponse()
                data = res.read()
            finally:
                up.close()
            with faults.lock:
                faults.counts["forwarded"] += 1
            if fault == "reset_after":
                self.close_connection = True
                return _reset(self.connection)
            self._reply(res.status, res.getheaders(), data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

    return Handler


class TcpLink:
    """--tcp: bytes forwarded as they come, for a protocol the HTTP proxy cannot read (the Prefect API's
    websockets); its one fault is `cut`, which resets every open connection and refuses new ones."""

    def __init__(self, upstream: str, faults: Faults):
        self.upstream, self.faults = urlsplit(upstream), faults
        self.open: set[socket.socket] = set()
        self.lock = threading.Lock()

    def cut_all(self) -> None:
        with self.lock:
            conns, self.open = list(self.open), set()
        for c in conns:
            _reset(c)

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for c in (src, dst):
                try:
                    c.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def serve(self, port: int) -> None:
        with socket.create_server(("127.0.0.1", port)) as srv:
            while True:
                client, _ = srv.accept()
                with self.faults.lock:
                    self.faults.counts["requests"] += 1
                    cut = self.faults.settings["cut"]
                if cut:
                    _reset(client)
                    continue
                try:
                    up = socket.create_connection((self.upstream.hostname, self.upstream.port), timeout=10)
                    up.settimeout(None)
                except OSError:
                    _reset(client)
                    continue
                with self.lock:
                    self.open |= {client, up}
                for a, b in ((client, up), (up, client)):
                    threading.Thread(target=self._pump, args=(a, b), daemon=True).start()


def serve_admin(port: int, faults: Faults, on_cut) -> None:
    """The --tcp link's steering, on its own port: POST /__faults__ {"cut": true|false}, GET the counts."""

    class Admin(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

        def _handle(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if self.command == "POST":
                faults.configure(json.loads(body or b"{}"))
                if faults.settings["cut"]:
                    on_cut()
            with faults.lock:
                out = json.dumps(faults.counts).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        do_GET = do_POST = _handle

    server = ThreadingHTTPServer(("127.0.0.1", port), Admin)
    server.daemon_threads = True
    server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upstream", required=True, help="the S3 server's URL, e.g. http://127.0.0.1:5000")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--settings", default="{}", help="the initial settings, as JSON (see the module docstring)")
    ap.add_argument("--tcp", type=int, metavar="ADMIN_PORT", help="forward TCP, not HTTP; steered on ADMIN_PORT")
    args = ap.parse_args()
    faults = Faults(args.seed)
    faults.configure(json.loads(args.settings))
    if args.tcp:
        link = TcpLink(args.upstream, faults)
        threading.Thread(target=serve_admin, args=(args.tcp, faults, link.cut_all), daemon=True).start()
        return link.serve(args.port)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(args.upstream, faults))
    server.daemon_threads = True
    server.serve_forever()


if __name__ == "__main__":
    main()
