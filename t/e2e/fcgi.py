"""A minimal FastCGI client and stub responder (stdlib only) for the end-to-end tests.

The client talks to notesd's socket directly, without nginx, for protocol edge cases (a peer
that stalls in the middle of a body). The stub stands in for the worker pool behind the real
nginx, so the nginx configuration can be tested on its own: which params it passes, gzip of
upstream JSON, 504 from an upstream that never answers.
"""
import os
import socket
import struct
import threading
import time

VERSION = 1
BEGIN_REQUEST, ABORT_REQUEST, END_REQUEST, PARAMS, STDIN, STDOUT, STDERR = 1, 2, 3, 4, 5, 6, 7
RESPONDER = 1
KEEP_CONN = 1


def record(rtype, request_id, content=b""):
    """One FastCGI record (content up to 65535 bytes), padded to a multiple of 8."""
    pad = (-len(content)) % 8
    return struct.pack("!BBHHBx", VERSION, rtype, request_id, len(content), pad) + content + b"\0" * pad


def stream(rtype, request_id, data):
    """A whole stream: records of at most 32 KiB, then the empty record that ends it."""
    out = b""
    for i in range(0, len(data), 32768):
        out += record(rtype, request_id, data[i:i + 32768])
    return out + record(rtype, request_id)


def encode_params(params):
    out = b""
    for k, v in params.items():
        k, v = k.encode(), v.encode() if isinstance(v, str) else v
        for n in (len(k), len(v)):
            out += bytes([n]) if n < 128 else struct.pack("!I", n | 0x80000000)
        out += k + v
    return out


def decode_params(data):
    params, i = {}, 0
    while i < len(data):
        lengths = []
        for _ in range(2):
            if data[i] < 128:
                lengths.append(data[i])
                i += 1
            else:
                lengths.append(struct.unpack("!I", data[i:i + 4])[0] & 0x7FFFFFFF)
                i += 4
        k = data[i:i + lengths[0]].decode("latin-1")
        i += lengths[0]
        params[k] = data[i:i + lengths[1]].decode("latin-1")
        i += lengths[1]
    return params


def read_record(sock):
    """(type, request_id, content) or None at end of stream."""
    head = _read_exactly(sock, 8)
    if head is None:
        return None
    _, rtype, rid, clen, plen = struct.unpack("!BBHHBx", head)
    body = _read_exactly(sock, clen + plen)
    if body is None:
        return None
    return rtype, rid, body[:clen]


def _read_exactly(sock, n):
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


class FcgiResponse:
    """What a responder sent back: HTTP status, headers (lower-case names), body."""

    def __init__(self, stdout, stderr, app_status, ended):
        self.stdout, self.stderr, self.app_status, self.ended = stdout, stderr, app_status, ended
        head, _, self.body = stdout.partition(b"\r\n\r\n")
        self.headers = {}
        for line in head.decode("latin-1").split("\r\n"):
            if ":" in line:
                k, v = line.split(":", 1)
                self.headers.setdefault(k.strip().lower(), v.strip())
        self.status = int(self.headers.get("status", "200").split()[0]) if head else 0


def fcgi_request(address, params, body=b"", send_body_bytes=None, timeout=10.0,
                 unvalidated=None):
    """Sends one request to a FastCGI server (unix path or (host, port)) and reads the answer.

    send_body_bytes: send only that many bytes of body and never end the stream (a stalled
    peer); the answer is then whatever the server sends before closing or `timeout`.
    A complete answer (FCGI_END_REQUEST received) is checked against the OpenAPI document as
    the HTTP response nginx would pass on (openapi_check.py), unless `unvalidated` says why not.
    """
    r = _fcgi_exchange(address, params, body, send_body_bytes, timeout)
    if r.ended and r.status and not unvalidated:
        import openapi_check
        head = r.stdout.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        pairs = [tuple(x.strip() for x in line.split(":", 1)) for line in head if ":" in line]
        target = params.get("DOCUMENT_URI", "/")
        if params.get("QUERY_STRING"):
            target += "?" + params["QUERY_STRING"]
        openapi_check.check_response(params.get("REQUEST_METHOD", "GET"), target, r.status,
                                     openapi_check.RawHeaders(pairs), r.body)
    return r


def _fcgi_exchange(address, params, body, send_body_bytes, timeout):
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(address)
    try:
        sock.sendall(record(BEGIN_REQUEST, 1, struct.pack("!HB5x", RESPONDER, 0)))
        sock.sendall(stream(PARAMS, 1, encode_params(params)))
        if send_body_bytes is None:
            sock.sendall(stream(STDIN, 1, body))
        elif send_body_bytes:
            sock.sendall(record(STDIN, 1, body[:send_body_bytes]))
        stdout, stderr, app_status, ended = b"", b"", None, False
        try:
            while True:
                rec = read_record(sock)
                if rec is None:
                    break
                rtype, _, content = rec
                if rtype == STDOUT:
                    stdout += content
                elif rtype == STDERR:
                    stderr += content
                elif rtype == END_REQUEST:
                    app_status, ended = struct.unpack("!I", content[:4])[0], True
                    break
        except (socket.timeout, ConnectionResetError):
            pass
        return FcgiResponse(stdout, stderr, app_status, ended)
    finally:
        sock.close()


class StubResponder:
    """A FastCGI responder on a unix socket, served by a thread.

    mode "echo": answers 200 JSON describing what it received (params, body length, whether
    nginx asked to keep the connection), padded with `pad` bytes of filler (for gzip tests);
    it sets X-Request-Id like the real worker; "stub_status=NNN" in the query picks the status.
    mode "hang": reads the request, never answers.
    Every request received is appended to `self.requests` as a dict.
    """

    def __init__(self, path, mode="echo", pad=0):
        self.path, self.mode, self.pad = path, mode, pad
        self.requests = []
        self._stop = threading.Event()
        if os.path.exists(path):
            os.unlink(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(path)
        os.chmod(path, 0o660)
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def close(self):
        self._stop.set()
        self.thread.join(5)
        self.sock.close()
        if os.path.exists(self.path):
            os.unlink(self.path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _serve(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn):
        import json
        with conn:
            conn.settimeout(30)
            params, body, flags, rid = b"", b"", 0, 1
            while True:
                rec = read_record(conn)
                if rec is None:
                    return
                rtype, rid, content = rec
                if rtype == BEGIN_REQUEST:
                    flags = content[2]
                elif rtype == PARAMS:
                    params += content
                elif rtype == STDIN:
                    if not content:
                        break
                    body += content
            info = {"params": decode_params(params), "body_length": len(body),
                    "keep_conn": bool(flags & KEEP_CONN)}
            self.requests.append(info)
            if self.mode == "hang":
                while not self._stop.is_set():
                    time.sleep(0.1)
                return
            raw = info["params"].get("REQUEST_ID", "")
            req_id = "api-request-%s-%s-%s-%s-%s" % (raw[:8], raw[8:12], raw[12:16], raw[16:20], raw[20:])
            payload = dict(info, request_id=req_id, filler="note " * (self.pad // 5))
            out = json.dumps(payload).encode()
            # "stub_status=NNN" in the query string picks the status (error pass-through tests).
            status = "200 OK"
            for pair in info["params"].get("QUERY_STRING", "").split("&"):
                if pair.startswith("stub_status="):
                    status = pair[len("stub_status="):] + " Stub"
            head = ("Status: %s\r\nContent-Type: application/json; charset=utf-8\r\n"
                    "X-Request-Id: %s\r\nCache-Control: no-store\r\n\r\n" % (status, req_id)).encode()
            try:
                conn.sendall(stream(STDOUT, rid, head + out)
                             + record(END_REQUEST, rid, struct.pack("!IB3x", 0, 0)))
            except OSError:
                pass
