"""End-to-end harness: the real notesd pool behind a real nginx using the project's nginx/ files.

Example (a test module in t/e2e/, run by t/run_tests.py or `python3 -m unittest` from t/e2e):

    import unittest
    from harness import Stack, shared_stack

    class ListNotes(unittest.TestCase):
        @classmethod
        def setUpClass(cls):
            cls.stack = shared_stack()                 # one stack per process, started once
            cls.user, cls.token = cls.stack.create_user("alice")
            cls.stack.notesctl("demo", cls.user, "--notes", "30")

        def test_first_page(self):
            r = self.stack.request("GET", "/v2/notes", query={"limit": 5}, token=self.token)
            self.assertEqual(r.status, 200, r.text)
            self.assertEqual(r.headers["X-Request-Id"], r.json()["request_id"])

    # A private stack with other settings, stopped at the end of the block:
    with Stack(config={"workers": 3, "request_timeout_ms": 1000}) as st:
        st.request("GET", "/v2/collections", token=st.create_user("bob")[1])

Stack(config=..., notesd=False) runs nginx alone (every /v2 request is then nginx's 503);
nginx={...} passes settings to nginx/mkprefix.sh (READ_RATE, CONN_PER_ADDR, FCGI_READ_TIMEOUT...),
upstream="server unix:/x.sock;" points nginx at another FastCGI server.

Every response request() and raw_request() receive is checked against the OpenAPI document
(openapi_check.py): one the document does not describe raises openapi_check.Mismatch and fails
the test. A stack whose answers are not the service's (a stub upstream) opts out with
Stack(unvalidated="why"); a single request with request(..., unvalidated="why").

Environment: NOTESD_BUILDDIR (holds the built notesd and notesctl), NOTESD_SRCDIR (the source
tree; default: two levels above this file), NOTESD_SHARED (the shared folder: corpus, eval),
NGINX (the nginx binary; default: found on PATH or /usr/sbin), NOTESD_E2E_SET (space-separated
KEY=VALUE notesd settings applied to every stack unless a test sets the key itself, e.g.
"max_requests=1"), NOTESD_E2E_KEEP=1 (keep temp dirs for inspection).

Database backend: NOTESD_E2E_DB=mysql|postgresql (default sqlite) makes every Stack without
db=... create a fresh database of its own on the server of NOTESD_TEST_MYSQL / NOTESD_TEST_PGSQL
(see serverdb.py; dropped at stop); `notesctl migrate` creates the schema as usual.
stack.backend names the stack's backend; stack.stored_bytes() and stack.integrity_problems()
look at what the database holds, whatever the backend.
"""
import atexit
import gzip
import http.client
import json as jsonlib
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse

import openapi_check
import serverdb
from serverdb import ServerError  # noqa: F401 (for tests that catch it)

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.environ.get("NOTESD_SRCDIR") or os.path.join(HERE, "..", ".."))
BUILDDIR = os.path.abspath(os.environ.get("NOTESD_BUILDDIR") or SRCDIR)
SHARED = os.path.abspath(os.environ.get("NOTESD_SHARED") or os.path.join(SRCDIR, "..", "shared"))


# The background merger's log line of each step (server/merger.cpp).
MERGE_STEP = re.compile(r'msg="merge step" user=(\d+) folded_notes=(\d+) merged_segments=(\d+) '
                        r'lost=(\w+) transactions=(\d+) longest_write_us=(\d+) longest_write=(\w+)'
                        r'[^\n]* cpu_us=(\d+)')

class StackError(RuntimeError):
    """The stack could not start (the message carries the tail of the logs)."""


def find_nginx():
    cand = os.environ.get("NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.path.exists(cand):
        raise StackError("nginx not found (apt-get install nginx-light, or set NGINX)")
    return cand


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def format_request_id(raw):
    """nginx's 32-hex $request_id as the contract's api-request-<uuid>."""
    return "api-request-%s-%s-%s-%s-%s" % (raw[:8], raw[8:12], raw[12:16], raw[16:20], raw[20:])


class Headers:
    """Case-insensitive response headers; h["X"] is the first value, h.get_all("X") every one."""

    def __init__(self, pairs):
        self.pairs = list(pairs)

    def get_all(self, name):
        return [v for k, v in self.pairs if k.lower() == name.lower()]

    def get(self, name, default=None):
        vals = self.get_all(name)
        return vals[0] if vals else default

    def __getitem__(self, name):
        vals = self.get_all(name)
        if not vals:
            raise KeyError(name)
        return vals[0]

    def __contains__(self, name):
        return bool(self.get_all(name))

    def __repr__(self):
        return "Headers(%r)" % self.pairs


class Response:
    """status, headers (Headers), raw (bytes as received), body (gunzipped), text, json()."""

    def __init__(self, status, headers, raw):
        self.status, self.headers, self.raw = status, headers, raw
        enc = (headers.get("Content-Encoding") or "").lower()
        self.body = gzip.decompress(raw) if enc == "gzip" and raw else raw
        self.text = self.body.decode("utf-8", errors="replace")
        self._json = None

    def json(self):
        """The body parsed as JSON (raises ValueError when it is not JSON)."""
        if self._json is None:
            self._json = jsonlib.loads(self.text)
        return self._json

    def __repr__(self):
        return "<Response %d %s>" % (self.status, self.text[:300])


def build_url(path, query=None):
    """path plus a query given as a dict, a list of pairs (repeated keys) or a raw string."""
    if query is None or query == "" or query == {} or query == []:
        return path
    if isinstance(query, str):
        qs = query
    else:
        items = query.items() if isinstance(query, dict) else query
        pairs = []
        for k, v in items:
            if isinstance(v, bool):
                v = "true" if v else "false"
            pairs.append("%s=%s" % (urllib.parse.quote(str(k), safe=""),
                                    urllib.parse.quote(str(v), safe="")))
        qs = "&".join(pairs)
    return path + "?" + qs


_live_stacks = []
_open_databases = []  # ServerDatabase objects of stacks not stopped yet


def _drop_database(sdb):
    if sdb in _open_databases:
        _open_databases.remove(sdb)
    if os.environ.get("NOTESD_E2E_KEEP") != "1":
        sdb.drop()


def _stop_all():
    for st in list(_live_stacks):
        st.stop()
    for sdb in list(_open_databases):  # stacks made but never started
        try:
            _drop_database(sdb)
        except ServerError:
            pass


atexit.register(_stop_all)


class Stack:
    """A temp dir with a notesd config and database, notesd's master + workers, and nginx.

    config: notesd settings overriding the harness defaults (workers=2, listen on DIR/notesd.sock).
    notesd: False to start nginx only. nginx: settings for nginx/mkprefix.sh.
    upstream: FCGI_UPSTREAM for nginx (default: the stack's own notesd socket).
    nginx_extra: more http-level nginx config (e.g. a test server) with @PREFIX@ (the temp dir)
    and @EXTRA_PORT@ (a second free port, then in self.extra_port) filled in.
    db: a SOCI connection string (default: a fresh SQLite file in the temp dir, or with
    NOTESD_E2E_DB set a fresh database on that server, dropped at stop).
    test_hooks: run t/notesd-test-hooks (notesd built with -DNOTESD_TEST_HOOKS: a query with
    notesd_test_hang=1 wedges its worker, notesd_test_sleep_ms=N slows its handler; with
    NOTESD_TEST_FOLD_PAUSE_MS=N in env the merger pauses N ms in each fold before its publish).
    env: more environment variables for notesd and notesctl.
    unvalidated: why this stack's responses are not checked against the OpenAPI document
    (None: they are).
    """

    def __init__(self, config=None, notesd=True, nginx=None, upstream=None, db=None,
                 migrate=True, nginx_extra=None, start_timeout=15.0, test_hooks=False, unvalidated=None,
                 env=None):
        self.unvalidated = unvalidated
        self.extra_env = dict(env or {})
        self.dir = tempfile.mkdtemp(prefix="notesd-e2e-")
        reg = os.environ.get("NOTESD_E2E_REGISTRY")
        if reg:  # removed by t/run_tests.py if this process dies before stop()
            with open(os.path.join(reg, "dir." + os.path.basename(self.dir)), "w") as f:
                f.write(self.dir)
        self.data_dir = os.path.join(self.dir, "data")   # 0700: config, secret, database
        os.makedirs(self.data_dir, mode=0o700)
        self.nginx_settings = dict(nginx or {})
        if os.geteuid() == 0:
            # As nginx/mkprefix.sh will do: nginx's workers (www-data) reach the dir and any
            # socket created in it (setgid: sockets get the dir's group). Done here already so
            # a socket a test creates before start() gets the right group too.
            import grp
            group = grp.getgrnam(self.nginx_settings.get("NGINX_USER", "www-data")).gr_gid
            os.chown(self.dir, -1, group)
            os.chmod(self.dir, 0o2750)
        self.socket_path = os.path.join(self.dir, "notesd.sock")
        self.server_db = None
        if db is None and notesd and serverdb.e2e_backend() != "sqlite":
            self.server_db = self._fresh_server_database()
            db = self.server_db.conn
        self.db_url = db or "sqlite3://db=%s" % os.path.join(self.data_dir, "notes.db")
        self.backend = serverdb.parse_conn(self.db_url)[0]
        self.config_path = os.path.join(self.data_dir, "notesd.conf")
        self.log_path = os.path.join(self.dir, "notesd.log")
        self.port = None
        self.notesd_proc = None
        self.nginx_proc = None
        self.want_notesd, self.want_migrate = notesd, migrate
        self.upstream = upstream
        self.nginx_extra = nginx_extra
        self.extra_port = None
        self.start_timeout = start_timeout
        self.notesd_binary = os.path.join("t", "notesd-test-hooks") if test_hooks else "notesd"
        self.status_socket_path = os.path.join(self.dir, "notesd-status.sock")
        self.settings = self._default_settings()
        self.settings.update({k: str(v) for k, v in (config or {}).items()})
        secret = os.path.join(self.data_dir, "secret")
        with open(os.open(secret, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        self.write_config()
        self._started = False

    # ---- life cycle -------------------------------------------------------------------------

    def _fresh_server_database(self):
        backend = serverdb.e2e_backend()
        admin = os.environ.get(serverdb.ADMIN_ENV[backend], "").strip()
        try:
            if not admin:
                raise ServerError("NOTESD_E2E_DB=%s needs %s (the server's connection string)"
                                  % (backend, serverdb.ADMIN_ENV[backend]))
            sdb = serverdb.ServerDatabase(admin)
        except ServerError as e:
            shutil.rmtree(self.dir, ignore_errors=True)
            raise StackError(str(e))
        _open_databases.append(sdb)
        return sdb

    def _default_settings(self):
        s = {
            "listen": self.socket_path,
            "listen_mode": "0660",
            "workers": "2",
            "stop_timeout_ms": "5000",
            "db": self.db_url,
            "secret_file": os.path.join(self.data_dir, "secret"),
            "log_level": "info",
            "pid_file": os.path.join(self.dir, "notesd.pid"),
            # no background merger (server/merger.hpp): the tests that look at the index's
            # layout see only what they did; t/e2e/test_merger.py turns it on
            "merge_interval_ms": "0",
        }
        for kv in os.environ.get("NOTESD_E2E_SET", "").split():
            k, _, v = kv.partition("=")
            s[k] = v
        return s

    def write_config(self, **changes):
        """Rewrites the notesd config file with `changes` applied (for SIGHUP reload tests)."""
        self.settings.update({k: str(v) for k, v in changes.items()})
        with open(self.config_path, "w") as f:
            f.write("# written by t/e2e/harness.py\n")
            for k, v in self.settings.items():
                f.write("%s = %s\n" % (k, v))

    def start(self):
        if self._started:
            return self
        self._started = True
        _live_stacks.append(self)
        try:
            if self.want_notesd:
                if self.want_migrate:
                    self.notesctl("migrate")
                self._start_notesd()
            self._start_nginx()
        except BaseException:
            self.stop()
            raise
        return self

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def _env(self):
        env = dict(os.environ)
        env.pop("NOTESD_DB", None)  # it would override the stack's own database
        env.update(self.extra_env)
        return env

    def binary(self, name):
        path = os.path.join(BUILDDIR, name)
        if not os.access(path, os.X_OK):
            raise StackError("%s is not built (looked for %s)" % (name, path))
        return path

    def _start_notesd(self):
        log = open(self.log_path, "ab")
        self.notesd_proc = subprocess.Popen(
            [self.binary(self.notesd_binary), "--config", self.config_path], stdin=subprocess.DEVNULL,
            stdout=log, stderr=log, env=self._env(), start_new_session=True)
        _register(self.notesd_proc, True)
        log.close()
        self.wait_for(self._socket_accepts, "notesd socket %s" % self.socket_path)
        self.wait_for(lambda: len(self.worker_pids()) >= 1, "a notesd worker")

    def _socket_accepts(self):
        if self.notesd_proc.poll() is not None:
            raise StackError("notesd exited with status %s\n%s"
                             % (self.notesd_proc.returncode, self.logs()[-3000:]))
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(self.socket_path)
            return True
        except OSError:
            return False
        finally:
            s.close()

    def _start_nginx(self):
        nginx = find_nginx()
        for attempt in range(5):
            self.port = free_port()
            settings = {"LISTEN": "127.0.0.1:%d" % self.port,
                        "OPENAPI_JSON": openapi_check.built_document_path()}
            if self.upstream:
                settings["FCGI_UPSTREAM"] = self.upstream
            settings.update(self.nginx_settings)
            cmd = ["sh", os.path.join(SRCDIR, "nginx", "mkprefix.sh"), self.dir]
            cmd += ["%s=%s" % kv for kv in settings.items()]
            run(cmd)
            if self.nginx_extra:
                self.extra_port = free_port()
                with open(os.path.join(self.dir, "conf.d", "extra.conf"), "w") as f:
                    f.write(self.nginx_extra.replace("@PREFIX@", self.dir)
                            .replace("@EXTRA_PORT@", str(self.extra_port)))
            errlog = open(os.path.join(self.dir, "logs", "nginx.stderr"), "ab")
            self.nginx_proc = subprocess.Popen(
                [nginx, "-p", self.dir, "-c", os.path.join(self.dir, "nginx.conf"),
                 "-g", "daemon off;"], stdin=subprocess.DEVNULL, stdout=errlog, stderr=errlog,
                start_new_session=True)
            _register(self.nginx_proc, True)
            errlog.close()
            try:
                self.wait_for(self._nginx_answers, "nginx on port %d" % self.port)
                return
            except StackError:
                if attempt == 4 or "Address already in use" not in self.nginx_logs():
                    raise
                _kill_group(self.nginx_proc)
                self.nginx_proc = None  # port taken meanwhile: try another one
                os.unlink(os.path.join(self.dir, "logs", "nginx.stderr"))

    def _nginx_answers(self):
        if self.nginx_proc.poll() is not None:
            raise StackError("nginx exited with status %s\n%s"
                             % (self.nginx_proc.returncode, self.nginx_logs()[-3000:]))
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def wait_for(self, predicate, what, timeout=None):
        deadline = time.monotonic() + (timeout or self.start_timeout)
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.05)
        raise StackError("timed out waiting for %s\nnotesd log:\n%s\nnginx log:\n%s"
                         % (what, self.logs()[-3000:], self.nginx_logs()[-2000:]))

    def stop_notesd(self, sig=signal.SIGTERM, timeout=None):
        """Stops the notesd master with `sig`; returns its exit status (None if not running)."""
        proc = self.notesd_proc
        if proc is None:
            return None
        if proc.poll() is None:
            os.kill(proc.pid, sig)
        try:
            proc.wait(timeout or int(self.settings.get("stop_timeout_ms", "10000")) / 1000 + 5)
        except subprocess.TimeoutExpired:
            pass
        _kill_group(proc)
        return proc.returncode

    def restart_notesd(self, workers=1):
        """Stops notesd (SIGTERM) and starts it again on the same settings (nginx keeps
        running); returns once `workers` workers run."""
        self.stop_notesd()
        self._start_notesd()
        self.wait_for(lambda: len(self.worker_pids()) >= workers, "%d notesd workers" % workers)

    def stop(self):
        """Stops nginx and notesd (whatever is left of their process groups is killed)."""
        if self.nginx_proc is not None:
            if self.nginx_proc.poll() is None:
                self.nginx_proc.send_signal(signal.SIGQUIT)
                try:
                    self.nginx_proc.wait(5)
                except subprocess.TimeoutExpired:
                    pass
            _kill_group(self.nginx_proc)
        self.stop_notesd()
        if self in _live_stacks:
            _live_stacks.remove(self)
        if self.server_db is not None:
            _drop_database(self.server_db)
        self._keep_sanitizer_output()
        if os.environ.get("NOTESD_E2E_KEEP") != "1":
            shutil.rmtree(self.dir, ignore_errors=True)
        reg = os.environ.get("NOTESD_E2E_REGISTRY")
        if reg and os.path.exists(os.path.join(reg, "dir." + os.path.basename(self.dir))):
            os.unlink(os.path.join(reg, "dir." + os.path.basename(self.dir)))

    def _keep_sanitizer_output(self):
        """In the e2e asan pass (NOTESD_E2E_SANITIZER_DIR, set by run_tests.py): a notesd log
        holding a UBSan report is copied there, where the pass counts it as a failure. With GCC,
        libubsan beside libasan writes its reports to stderr whatever log_path says (ASan's
        reports do go to log_path files)."""
        out = os.environ.get("NOTESD_E2E_SANITIZER_DIR")
        if not out or not os.path.exists(self.log_path):
            return
        with open(self.log_path, "rb") as f:
            text = f.read()
        if b"runtime error:" in text or b"Sanitizer" in text:
            shutil.copyfile(self.log_path,
                            os.path.join(out, "notesd-log-" + os.path.basename(self.dir)))

    # ---- processes --------------------------------------------------------------------------

    def master_pid(self):
        return self.notesd_proc.pid if self.notesd_proc else None

    def worker_pids(self):
        """Live children of the notesd master (read from /proc; zombies left out)."""
        master = self.master_pid()
        return children_of(master) if master else []

    def signal_master(self, sig):
        os.kill(self.master_pid(), sig)

    def wait_for_workers(self, n, timeout=10.0, exclude=()):
        """Waits until exactly n workers run, none of them in `exclude`; returns their pids."""
        seen = []

        def settled():
            # One reading of /proc per check: two readings could each see a different moment
            # (the killed worker still counted by the first, already gone in the second).
            seen[:] = self.worker_pids()
            return len(seen) == n and not set(seen) & set(exclude)

        self.wait_for(settled, "%d notesd workers" % n, timeout)
        return list(seen)

    # ---- admin tool -------------------------------------------------------------------------

    def notesctl(self, *args, check=True, input=None, timeout=300):
        """Runs notesctl --db <this stack's db> ARGS; returns the CompletedProcess (text)."""
        cmd = [self.binary("notesctl"), "--db", self.db_url] + [str(a) for a in args]
        return run(cmd, check=check, input=input, timeout=timeout, env=self._env())

    def create_user(self, name):
        """Adds a user and a token for it; returns (name, token)."""
        self.notesctl("user", "add", name)
        return name, self.create_token(name)

    def create_token(self, user):
        out = self.notesctl("token", "create", user).stdout.strip().splitlines()
        if not out or not out[-1].strip():
            raise StackError("notesctl token create printed no token")
        return out[-1].strip()

    # ---- HTTP -------------------------------------------------------------------------------

    def url(self, path="/", query=None):
        return "http://127.0.0.1:%d%s" % (self.port, build_url(path, query))

    def request(self, method, path, query=None, body=None, headers=None, token=None,
                timeout=30.0, unvalidated=None):
        """One HTTP request through nginx on a fresh connection; returns a Response, after
        checking it against the OpenAPI document (see the module's doc).

        query: dict, list of (key, value) pairs, or a raw string (sent as is). body: bytes, str,
        or a dict/list sent as JSON (Content-Type application/json unless headers set one).
        token: adds "Authorization: Bearer <token>". unvalidated: why this response is not
        checked (None: it is).
        """
        hdrs = dict(headers or {})
        data = body
        if isinstance(body, (dict, list)):
            data = jsonlib.dumps(body).encode()
            if not any(k.lower() == "content-type" for k in hdrs):
                hdrs["Content-Type"] = "application/json"
        elif isinstance(body, str):
            data = body.encode()
        if token is not None:
            hdrs["Authorization"] = "Bearer " + token
        target = build_url(path, query)
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            conn.request(method, target, body=data, headers=hdrs)
            resp = conn.getresponse()
            raw = resp.read()
            r = Response(resp.status, Headers(resp.getheaders()), raw)
        finally:
            conn.close()
        if not (unvalidated or self.unvalidated):
            openapi_check.check_response(method, target, r.status, r.headers, r.body)
        return r

    def raw_request(self, data, timeout=10.0, unvalidated=None):
        """Sends raw bytes to nginx and returns everything it answers until it closes; the
        first response in it is checked against the OpenAPI document unless `unvalidated`
        says why not."""
        out = self._raw_exchange(data, timeout)
        if not (unvalidated or self.unvalidated):
            openapi_check.check_raw(data, out)
        return out

    def _raw_exchange(self, data, timeout):
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            s.sendall(data)
            out = b""
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    out += chunk
            except socket.timeout:
                pass
            return out

    def status(self, prometheus=False):
        """The master's status page through nginx: the JSON as a dict, or the Prometheus text."""
        r = self.request("GET", "/notesd-status", query="format=prometheus" if prometheus else None)
        if r.status != 200:
            raise StackError("status page answered %d: %s" % (r.status, r.text[:300]))
        return r.text if prometheus else r.json()

    # ---- the database -----------------------------------------------------------------------

    def stored_bytes(self):
        """Everything the database holds, as bytes: the SQLite files (main, -wal, -shm) as
        they are on disk, or a server's dump (mariadb-dump / pg_dump) of the stack's database."""
        if self.backend != "sqlite":
            return serverdb.dump(self.db_url)
        path = self.sqlite_path()
        blob = b""
        for name in sorted(os.listdir(os.path.dirname(path))):
            if name.startswith(os.path.basename(path)):
                try:
                    with open(os.path.join(os.path.dirname(path), name), "rb") as f:
                        blob += f.read()
                except FileNotFoundError:
                    # the last connection to close (a recycled worker) checkpoints and
                    # removes -wal/-shm between listdir and open; its content is in the
                    # main file by then, which is read as well
                    pass
        return blob

    def integrity_problems(self):
        """[] when the database's own checker finds nothing wrong (SQLite: integrity_check and
        foreign_key_check; servers: see serverdb.integrity_problems)."""
        if self.backend != "sqlite":
            return serverdb.integrity_problems(self.db_url)
        p = run(["sqlite3", self.sqlite_path(),
                 "PRAGMA integrity_check; PRAGMA foreign_key_check;"])
        out = p.stdout.strip()
        return [] if out == "ok" else out.splitlines()

    def sql(self, statement):
        """Runs SQL on the stack's database with its backend's command-line client (sqlite3,
        mariadb, psql); returns the client's output, e.g. "3\n" for one count."""
        if self.backend != "sqlite":
            return serverdb.client_sql(self.db_url, statement)
        return run(["sqlite3", "-cmd", ".timeout 10000", self.sqlite_path(), statement]).stdout

    def sqlite_path(self):
        if self.backend != "sqlite":
            raise StackError("the stack's database is %s, not a SQLite file" % self.backend)
        pairs = dict(serverdb.parse_conn(self.db_url)[1])
        return pairs.get("db") or pairs.get("dbname")

    # ---- logs -------------------------------------------------------------------------------

    def logs(self):
        """notesd's stderr (master and workers) so far."""
        try:
            with open(self.log_path, "rb") as f:
                return f.read().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def merge_steps(self, since=0):
        """(user, folded, merged, lost, transactions, longest_write_us, its op, cpu_us) of each
        step the background merger logged (server/merger.cpp), in notesd's log from offset
        `since` on."""
        return [(int(m[0]), int(m[1]), int(m[2]), m[3] == "yes", int(m[4]), int(m[5]), m[6], int(m[7]))
                for m in MERGE_STEP.findall(self.logs()[since:])]

    def access_log(self):
        """nginx's access log as dicts: id, status, upstream_status ("-" when nginx answered
        alone, "502"/"504" when the pool failed, else the worker's status; "502, 200" after a retry
        on another server), request."""
        entries = []
        try:
            with open(os.path.join(self.dir, "logs", "access.log")) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            return entries
        for line in lines:
            m = re.search(r'"([^"]*)" (\d+) \d+ rt=\S+ us=(.*?) urt=.*? id=(\S+)$', line)
            if m:
                entries.append({"request": m.group(1), "status": int(m.group(2)),
                                "upstream_status": m.group(3), "id": m.group(4)})
        return entries

    def upstream_statuses(self, ids, timeout=5.0):
        """{request id: upstream_status} from the access log, once every one of `ids` is in it:
        nginx writes a request's line after it has answered, so a test that has its answer may
        look before the line is there. Ids still missing after `timeout` are left out."""
        want = set(ids)
        deadline = time.monotonic() + timeout
        while True:
            found = {e["id"]: e["upstream_status"] for e in self.access_log()}
            if want <= set(found) or time.monotonic() > deadline:
                return found
            time.sleep(0.02)

    def nginx_logs(self):
        out = ""
        for name in ("nginx.stderr", "error.log", "access.log"):
            try:
                with open(os.path.join(self.dir, "logs", name), "rb") as f:
                    out += "== %s ==\n%s" % (name, f.read().decode("utf-8", errors="replace"))
            except FileNotFoundError:
                pass
        return out


def assert_unavailable(test, r, what, hidden=(), upstream=None):
    """Asserts that r is the JSON 503 UNAVAILABLE of the contract (section 6) with Retry-After
    and none of the words `hidden` (of the database's own errors) in its body. upstream: the
    Stack that answered, or the access log's {request id: upstream status} of its requests:
    then the worker must have answered, not nginx for a dead or stuck worker (502/504)."""
    what = "%s -> %d %s" % (what, r.status, r.text[:300])
    test.assertEqual(r.status, 503, what)
    test.assertTrue(r.headers.get("Content-Type", "").startswith("application/json"), what)
    doc = r.json()
    test.assertEqual(doc["error_metadata"]["error_kind"], "UNAVAILABLE", what)
    test.assertEqual(r.headers["X-Request-Id"], doc["request_id"], what)
    test.assertRegex(r.headers.get("Retry-After", ""), r"^[1-9][0-9]*$", what)
    for word in hidden:
        test.assertNotIn(word, r.text.lower(), "no database detail for clients: " + what)
    if isinstance(upstream, Stack):
        upstream = upstream.upstream_statuses([doc["request_id"]])
    if upstream is not None:
        test.assertEqual(upstream.get(doc["request_id"]), "503", "not the worker's 503: " + what)


def run(cmd, check=True, input=None, timeout=120, env=None):
    """subprocess.run with text output; on failure raises StackError with the command's output."""
    p = subprocess.run(cmd, input=input, capture_output=True, text=True, timeout=timeout, env=env)
    if check and p.returncode != 0:
        raise StackError("%s exited with %d\nstdout: %s\nstderr: %s"
                         % (" ".join(cmd), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p


def proc_stat(pid):
    """(state, ppid) of a process from /proc, or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            data = f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = data[data.rindex(")") + 2:].split()
    return fields[0], int(fields[1])


def children_of(ppid):
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = proc_stat(int(name))
            if st and st[1] == ppid and st[0] != "Z":
                out.append(int(name))
    return sorted(out)


def _register(proc, started):
    """Notes (started=True) or forgets a process group we started in NOTESD_E2E_REGISTRY, so
    t/run_tests.py can kill what a crashed or timed-out test module left running."""
    reg = os.environ.get("NOTESD_E2E_REGISTRY")
    if not reg:
        return
    path = os.path.join(reg, str(proc.pid))
    if started:
        with open(path, "w") as f:
            f.write(" ".join(proc.args) if isinstance(proc.args, list) else str(proc.args))
    elif os.path.exists(path):
        os.unlink(path)


def _kill_group(proc):
    """SIGKILL whatever is left of the process group we started `proc` in (start_new_session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass
    _register(proc, False)


_shared = {}


def shared_stack(**kwargs):
    """A started Stack shared by every caller in this process with the same arguments.

    It is stopped at exit. Tests must not stop it or change its config; use a private Stack
    for that.
    """
    key = repr(sorted(kwargs.items()))
    st = _shared.get(key)
    if st is None or st.nginx_proc is None:
        st = Stack(**kwargs).start()
        _shared[key] = st
    return st
