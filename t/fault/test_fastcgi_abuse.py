"""Fault rows: a hostile peer on the workers' FastCGI socket, through the real pool. Only nginx
should reach the socket, but a local user with access to it, a misconfigured proxy or a broken
client library can send anything. Each row sends its bytes straight to the socket while a
well-behaved client keeps asking through nginx; then:

- no worker crashed or was replaced (the status page: crashes and restarts unchanged; the log
  has no `worker died`), the master runs on;
- every request through nginx during and after the abuse was answered 200;
- the abusive connection was closed by the worker, or answered, within io_timeout_ms
  (never held open).

Rows: bogus record lengths (a header promising more than follows, a padding of 255, a record
of another protocol version, unknown record types, an unknown role), garbage bytes (random
data, an HTTP request sent to the FastCGI socket), huge params (a name-value pair claiming
2 GiB lengths, 4 MiB of real params), a request whose params never end, interleaved request
ids (records of another request id in between those of the request, which is answered alone).
(Stalled params and bodies: test_stuck_workers.StalledInput.)
"""
import os
import socket
import struct
import time
import unittest

import faultlib
import fcgi  # noqa: E402
from harness import Stack  # noqa: E402

IO_TIMEOUT_MS = 1000


def begin(request_id=1, role=fcgi.RESPONDER, flags=0):
    return fcgi.record(fcgi.BEGIN_REQUEST, request_id, struct.pack("!HB5x", role, flags))


def header(rtype, request_id, content_length, padding=0, version=fcgi.VERSION):
    """A record header alone: its content and padding are for the caller to send (or not)."""
    return struct.pack("!BBHHBx", version, rtype, request_id, content_length, padding)


def pair_head(name_len, value_len):
    """The lengths of a FastCGI name-value pair, in their 4-byte form."""
    return struct.pack("!II", name_len | 0x80000000, value_len | 0x80000000)


class FastCgiAbuse(faultlib.FaultCase):
    @classmethod
    def setUpClass(cls):
        cls.stack = Stack(config={"workers": 2, "io_timeout_ms": IO_TIMEOUT_MS}).start()
        cls.token = faultlib.demo_user(cls.stack)

    @classmethod
    def tearDownClass(cls):
        cls.stack.stop()

    def setUp(self):
        self.stack.wait_for_workers(2)
        self.master = self.stack.master_pid()
        self.lifecycle = self.stack.status()["worker_lifecycle"]

    def params(self, **extra):
        return faultlib.fastcgi_params(self.token, **extra)

    def exchange(self, data, close_after_send=False):
        """Sends raw bytes to the worker socket; returns (what came back until the worker closed
        the connection, seconds it took). With close_after_send our side ends its output."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(IO_TIMEOUT_MS / 1000 * 3 + 5)
        s.connect(self.stack.socket_path)
        t0 = time.monotonic()
        out = b""
        try:
            try:
                s.sendall(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the worker gave up on the rest: fine, as long as it lives
            if close_after_send:
                s.shutdown(socket.SHUT_WR)
            while True:
                try:
                    chunk = s.recv(65536)
                except ConnectionResetError:
                    break
                except socket.timeout:
                    self.fail("the worker held the connection open past its io_timeout_ms")
                if not chunk:
                    break
                out += chunk
        finally:
            s.close()
        return out, time.monotonic() - t0

    def abuse(self, *payloads, close_after_send=False):
        """Each payload on its own connection while a probe asks through nginx; then the
        checks of the module's doc. Returns the answers."""
        answers = []
        with faultlib.Probe(self.stack, "/v2/notes?limit=1", self.token, interval=0.05) as probe:
            for data in payloads:
                answers.append(self.exchange(data, close_after_send)[0])
            time.sleep(0.6)  # a few probes after the last payload
        self.assert_probe_answered(probe)
        r = self.stack.request("GET", "/v2/notes", query={"limit": 2}, token=self.token)
        self.assertEqual(r.status, 200, r.text[:300])
        self.assertEqual(self.stack.master_pid(), self.master)
        self.assertIsNone(self.stack.notesd_proc.poll(), "the master exited")
        lifecycle = self.stack.status()["worker_lifecycle"]
        self.assertEqual(lifecycle["crashes"], self.lifecycle["crashes"], "a worker crashed")
        self.assertEqual(lifecycle["restarts"], self.lifecycle["restarts"],
                         "a worker was replaced")
        self.assertNotIn("worker died", self.stack.logs())
        return answers

    def assert_fastcgi_answer(self, raw, status):
        """raw is a whole FastCGI answer (records up to END_REQUEST) with this HTTP status."""
        stdout, ended, i = b"", False, 0
        while i + 8 <= len(raw):
            _, rtype, _, clen, plen = struct.unpack("!BBHHBx", raw[i:i + 8])
            if rtype == fcgi.STDOUT:
                stdout += raw[i + 8:i + 8 + clen]
            ended = ended or rtype == fcgi.END_REQUEST
            i += 8 + clen + plen
        self.assertTrue(ended, "no FCGI_END_REQUEST in %r" % raw[:200])
        self.assertIn(("Status: %d" % status).encode(), stdout, stdout[:300])
        return stdout

    # ---- the rows ---------------------------------------------------------------------------

    def test_bogus_record_lengths(self):
        good = fcgi.encode_params(self.params())
        self.abuse(
            # a params header promising 65535 bytes, then 10 and the end of the connection
            begin() + header(fcgi.PARAMS, 1, 65535) + b"x" * 10,
            # a padding of 255 bytes that never comes
            begin() + header(fcgi.PARAMS, 1, len(good), padding=255) + good,
            # a begin record that is too short for its type (content length 2)
            header(fcgi.BEGIN_REQUEST, 1, 2) + b"\x00\x01",
            # another protocol version, and a record type no version has
            begin() + header(fcgi.PARAMS, 1, 0, version=2),
            begin() + header(77, 1, 8) + b"\0" * 8 + fcgi.stream(fcgi.PARAMS, 1, good),
            close_after_send=True)
        # an unknown role is refused, as the protocol says, and the worker serves on
        raw = self.abuse(begin(role=9) + fcgi.stream(fcgi.PARAMS, 1, good) +
                         fcgi.stream(fcgi.STDIN, 1, b""), close_after_send=True)[0]
        self.assertNotIn(b"Status: 200", raw)

    def test_garbage_bytes(self):
        self.abuse(os.urandom(4096), os.urandom(1 << 20),
                   b"GET /v2/notes HTTP/1.1\r\nHost: x\r\n\r\n", b"\0" * 65536,
                   close_after_send=True)

    def test_huge_params(self):
        two_gib = (1 << 31) - 1
        self.abuse(
            # a pair claiming 2 GiB for its name and its value, then the end of the connection
            begin() + fcgi.record(fcgi.PARAMS, 1, pair_head(two_gib, two_gib) + b"x" * 100),
            begin() + fcgi.record(fcgi.PARAMS, 1, pair_head(16, two_gib) + b"HTTP_X_HUGE_NAME"),
            close_after_send=True)
        # 4 MiB of real params (64 headers of 64 KiB), a whole request: answered or refused,
        # not a crash
        big = self.params(**{"HTTP_X_FILLER_%d" % i: "v" * 65536 for i in range(64)})
        raw = self.abuse(begin() + fcgi.stream(fcgi.PARAMS, 1, fcgi.encode_params(big)) +
                         fcgi.stream(fcgi.STDIN, 1, b""))[0]
        self.assert_fastcgi_answer(raw, 200)

    def test_params_never_end(self):
        body = fcgi.encode_params(self.params())
        self.abuse(
            # params records, then stdin without the empty params record that ends them
            begin() + fcgi.record(fcgi.PARAMS, 1, body) + fcgi.stream(fcgi.STDIN, 1, b""),
            # params records and then nothing (the peer stays connected: io_timeout_ms)
            begin() + fcgi.record(fcgi.PARAMS, 1, body))

    def test_interleaved_request_ids(self):
        good = fcgi.encode_params(self.params())
        other = fcgi.encode_params(self.params(QUERY_STRING="limit=0", DOCUMENT_URI="/v2/x"))
        data = (begin(1) + begin(2) + fcgi.record(fcgi.PARAMS, 2, other) +
                fcgi.record(fcgi.PARAMS, 1, good) + fcgi.record(fcgi.STDIN, 2, b"junk") +
                fcgi.record(fcgi.PARAMS, 2) + fcgi.record(fcgi.PARAMS, 1) +
                fcgi.record(fcgi.ABORT_REQUEST, 2) + fcgi.record(fcgi.STDIN, 1))
        raw = self.abuse(data)[0]
        # request 1 is answered; request 2 only refused (FCGI_END_REQUEST with
        # FCGI_CANT_MPX_CONN: a worker serves one request per connection)
        stdout = self.assert_fastcgi_answer(raw, 200)
        self.assertIn(b'"results"', stdout)
        i = 0
        while i + 8 <= len(raw):
            _, rtype, rid, clen, plen = struct.unpack("!BBHHBx", raw[i:i + 8])
            if rid != 1:
                self.assertEqual((rid, rtype), (2, fcgi.END_REQUEST), raw[:300])
                self.assertEqual(raw[i + 12], 1, "FCGI_CANT_MPX_CONN")
            i += 8 + clen + plen


if __name__ == "__main__":
    unittest.main()
