"""The Debian package, as an administrator meets it (issue 21): `dpkg-buildpackage -b` builds it
once from the tracked files of the source tree, lintian finds nothing, apt installs it, the
installed notesd serves the API through the installed nginx site, and apt purges it without
leftovers. Changes the machine (installs and purges the package notesd, creates the system user
notesd): t/run_tests.py runs it only when NOTESD_TEST_PACKAGE=1 says that is allowed (.ci/run).

Without systemd (CI has none) notesd runs as notesd.service would run it: as the service user,
with /etc/notesd.conf, on /run/notesd/notesd.sock in a directory of group www-data (what
notesd.socket sets up). nginx runs the installed site file inside a minimal nginx.conf, with a
free port and its access log in a temp directory as the only changes.

Facts for the summary line (build time, exposure level) go to $NOTESD_PACKAGE_FACTS (JSON)."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.error
import urllib.request

SRCDIR = os.path.abspath(os.environ.get("NOTESD_SRCDIR") or
                         os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
FACTS = os.environ.get("NOTESD_PACKAGE_FACTS", "")
PKG = "notesd"
SITE = "/etc/nginx/sites-available/notesd"
ENABLED_SITE = "/etc/nginx/sites-enabled/notesd"
CONF = "/etc/notesd.conf"
SECRET = "/etc/notesd/secret"
STATE = "/var/lib/notesd"
UNIT_DIR = "/lib/systemd/system"
RUN_DIR = "/run/notesd"
SOCKET = RUN_DIR + "/notesd.sock"
APT_ENV = dict(os.environ, DEBIAN_FRONTEND="noninteractive")


def sh(cmd, timeout=600, check=True, **kw):
    """Runs cmd; returns CompletedProcess with text output; raises with the output on failure."""
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, **kw)
    if check and p.returncode != 0:
        raise AssertionError("%s: exit status %d\n%s%s" % (" ".join(cmd), p.returncode,
                                                            p.stdout[-3000:], p.stderr[-3000:]))
    return p


def installed(pkg):
    p = sh(["dpkg-query", "-W", "-f=${Status}", pkg], check=False)
    return p.returncode == 0 and p.stdout.strip() == "install ok installed"


def package_known(pkg):
    """True while dpkg holds anything of pkg (installed, or removed with its conffiles)."""
    p = sh(["dpkg-query", "-W", "-f=${Status}", pkg], check=False)
    return p.returncode == 0 and not p.stdout.strip().endswith("not-installed")


def save_facts(**kw):
    if not FACTS:
        return
    facts = {}
    if os.path.exists(FACTS):
        with open(FACTS) as f:
            facts = json.load(f)
    facts.update(kw)
    with open(FACTS, "w") as f:
        json.dump(facts, f)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def register(proc, args):
    """Tells t/run_tests.py to kill this process group if the module ends without stopping it."""
    reg = os.environ.get("NOTESD_E2E_REGISTRY")
    if reg:
        with open(os.path.join(reg, str(proc.pid)), "w") as f:
            f.write(" ".join(args))


def stop(proc, timeout=20):
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    reg = os.environ.get("NOTESD_E2E_REGISTRY")
    if reg and os.path.exists(os.path.join(reg, str(proc.pid))):
        os.unlink(os.path.join(reg, str(proc.pid)))


def copy_source(dest):
    """The tracked and new (not ignored) files of the source tree: no build products."""
    p = sh(["git", "-C", SRCDIR, "ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    for rel in p.stdout.split("\0"):
        if not rel:
            continue
        src = os.path.join(SRCDIR, rel)
        if not os.path.lexists(src):  # deleted in the work tree, not yet in the index
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, rel), follow_symlinks=False)


class Package(unittest.TestCase):
    """One build, one install; the tests run in name order and share the installed package."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="notesd-package-")
        os.chmod(cls.tmp, 0o755)  # nginx's workers (www-data) use the temp paths in it
        cls.procs = []
        cls.made_run_dir = False
        if package_known(PKG):  # a run that died before its purge; this run may install
            print("purging the notesd package a previous run left installed")
            sh(["apt-get", "purge", "-y", "-q", PKG], env=APT_ENV)
        src = os.path.join(cls.tmp, "build", PKG)
        copy_source(src)
        t0 = time.monotonic()
        # The suite has run the unit tests already: nocheck keeps the package to one build.
        env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=2")
        with open(os.path.join(cls.tmp, "build.log"), "w") as log:
            rc = subprocess.call(["dpkg-buildpackage", "-b", "-us", "-uc"], cwd=src, env=env,
                                 stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        cls.build_s = time.monotonic() - t0
        save_facts(build_s=round(cls.build_s))
        if rc != 0:
            with open(os.path.join(cls.tmp, "build.log")) as f:
                raise AssertionError("dpkg-buildpackage failed (%d):\n%s" % (rc, f.read()[-4000:]))
        builds = os.path.join(cls.tmp, "build")
        debs = [f for f in os.listdir(builds) if re.match(r"notesd_[^_]+_[a-z0-9]+\.deb$", f)]
        changes = [f for f in os.listdir(builds) if f.endswith(".changes")]
        if len(debs) != 1 or len(changes) != 1:
            raise AssertionError("expected one notesd .deb and one .changes, got %s" % os.listdir(builds))
        cls.deb = os.path.join(builds, debs[0])
        cls.changes = os.path.join(builds, changes[0])
        print("built %s in %.0f s" % (debs[0], cls.build_s))
        t0 = time.monotonic()
        sh(["apt-get", "install", "-y", "-q", "--no-install-recommends", cls.deb], env=APT_ENV)
        save_facts(install_s=round(time.monotonic() - t0, 1))
        cls.files = [l for l in sh(["dpkg-query", "-L", PKG]).stdout.splitlines() if l.strip()]

    @classmethod
    def tearDownClass(cls):
        for proc in reversed(cls.procs):
            stop(proc)
        if cls.made_run_dir:
            shutil.rmtree(RUN_DIR, ignore_errors=True)
        if package_known(PKG):
            sh(["apt-get", "purge", "-y", "-q", PKG], env=APT_ENV, check=False)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # ---- the artefacts ------------------------------------------------------------------------

    def test_1_lintian_reports_nothing(self):
        p = sh(["lintian", "--pedantic", "--display-info", self.changes], check=False)
        tags = [l for l in p.stdout.splitlines() if re.match(r"[EWIP]: ", l)]
        print(p.stdout + p.stderr)
        self.assertEqual(tags, [], "lintian tags (fix, or override with a reason)")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def test_2_installs_files_owners_and_modes(self):
        with open(SITE) as f:
            site = f.read()
        # Every file the site includes is installed with it, as a conffile.
        includes = sorted(set(re.findall(r"(?m)^[^#\n]*\binclude\s+([^;\s]+);", site)))
        self.assertIn("/etc/nginx/snippets/notesd-errors.conf", includes)
        for path in ["/usr/sbin/notesd", "/usr/bin/notesctl", UNIT_DIR + "/notesd.service",
                     UNIT_DIR + "/notesd.socket", "/usr/lib/sysusers.d/notesd.conf", SITE, CONF,
                     "/usr/share/notesd/sql/sqlite/001_init.sql",
                     "/usr/share/notesd/sql/postgresql/001_init.sql",
                     "/usr/share/notesd/sql/mysql/001_init.sql",
                     "/usr/share/notesd/openapi.json",
                     "/usr/share/man/man8/notesd.8.gz", "/usr/share/man/man8/notesctl.8.gz",
                     "/usr/share/man/man5/notesd.conf.5.gz"] + includes:
            self.assertIn(path, self.files)
            self.assertTrue(os.path.exists(path), path)
        conffiles = sh(["dpkg-query", "-W", "-f=${Conffiles}", PKG]).stdout
        for path in [CONF, SITE] + includes:
            self.assertIn(path + " ", conffiles)
        # The site is there to enable, not enabled.
        self.assertFalse(os.path.lexists(ENABLED_SITE))
        self.assertIsNone(re.search(r"^[^#]*@[A-Z_]+@", site, re.M), "placeholders left")
        self.assertRegex(site, r"(?m)^\s*server unix:/run/notesd/notesd\.sock[ ;]")

        def owner(path):
            st = os.stat(path)
            return (sh(["stat", "-c", "%U:%G", path]).stdout.strip(), st.st_mode & 0o7777)

        self.assertEqual(sh(["id", "-un", "notesd"]).stdout.strip(), "notesd")
        self.assertEqual(owner(STATE), ("notesd:notesd", 0o750))
        self.assertEqual(owner(CONF), ("root:notesd", 0o640))
        self.assertEqual(owner(SECRET), ("root:notesd", 0o640))
        with open(SECRET) as f:
            self.assertRegex(f.read(), r"^[0-9a-f]{64}$")
        with open(CONF) as f:
            self.assertIn("\nsecret_file = /etc/notesd/secret\n", f.read())
        # postinst created the schema of the configured SQLite database, as the service user.
        self.assertEqual(owner(STATE + "/notes.db")[0], "notesd:notesd")
        p = sh(["runuser", "-u", "notesd", "--", "notesctl", "migrate"])
        self.assertRegex(p.stdout, r"schema version [1-9]")
        sh(["/usr/sbin/notesd", "--config", CONF, "--check-config"])

    def test_3_reinstall_keeps_the_secret(self):
        with open(SECRET) as f:
            before = f.read()
        sh(["dpkg", "-i", self.deb], env=APT_ENV)
        with open(SECRET) as f:
            self.assertEqual(f.read(), before)

    def test_4_systemd_analyze_verify(self):
        units = [UNIT_DIR + "/notesd.service", UNIT_DIR + "/notesd.socket"]
        p = sh(["systemd-analyze", "verify"] + units, check=False)
        out = (p.stdout + p.stderr).strip()
        self.assertEqual((p.returncode, out), (0, ""))

    def test_5_systemd_analyze_security(self):
        # No running systemd: --offline=yes reads the unit file alone.
        p = sh(["systemd-analyze", "security", "--offline=yes", UNIT_DIR + "/notesd.service"],
               check=False)
        print(p.stdout)
        m = re.search(r"Overall exposure level for notesd\.service: ([0-9.]+) (\w+)", p.stdout)
        self.assertIsNotNone(m, p.stdout[-2000:] + p.stderr)
        save_facts(exposure="%s %s" % (m.group(1), m.group(2)))
        print("exposure level: %s %s" % (m.group(1), m.group(2)))
        self.assertLessEqual(float(m.group(1)), 2.0)

    # ---- serving --------------------------------------------------------------------------------

    def start(self, args, log_name, **kw):
        log = open(os.path.join(self.tmp, log_name), "wb")
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, **kw)
        log.close()
        register(proc, args)
        self.procs.append(proc)
        return proc

    def log(self, name):
        with open(os.path.join(self.tmp, name), errors="replace") as f:
            return f.read()[-3000:]

    def nginx_conf(self, port):
        """A minimal nginx.conf around a copy of the installed site: port and access log moved."""
        with open(SITE) as f:
            site = f.read()
        copy, n_listen = re.subn(r"(?m)^(\s*)listen\s+[^;]+;", r"\1listen 127.0.0.1:%d;" % port, site)
        copy, n_log = re.subn(r"(?m)^(\s*)access_log\s+\S+", r"\1access_log %s/access.log" % self.tmp,
                              copy)
        self.assertEqual((n_listen, n_log), (1, 1), "the site's listen and access_log lines")
        with open(os.path.join(self.tmp, "site.conf"), "w") as f:
            f.write(copy)
        conf = os.path.join(self.tmp, "nginx.conf")
        t = self.tmp
        with open(conf, "w") as f:
            f.write("user www-data www-data;\nworker_processes 1;\npid %s/nginx.pid;\n"
                    "error_log %s/error.log warn;\nevents { worker_connections 64; }\nhttp {\n"
                    "    client_body_temp_path %s/body;\n    fastcgi_temp_path %s/fastcgi;\n"
                    "    proxy_temp_path %s/proxy;\n    uwsgi_temp_path %s/uwsgi;\n"
                    "    scgi_temp_path %s/scgi;\n    include %s/site.conf;\n}\n"
                    % (t, t, t, t, t, t, t, t))
        return conf

    def get(self, url, token=None):
        req = urllib.request.Request(url)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.read()

    def test_6_serves_through_the_installed_site(self):
        ctl = ["runuser", "-u", "notesd", "--", "notesctl", "--config", CONF]
        sh(ctl + ["user", "add", "alice"])
        sh(ctl + ["demo", "alice", "--notes", "25"], timeout=300)
        token = sh(ctl + ["token", "create", "alice"]).stdout.strip().splitlines()[-1]
        self.assertRegex(token, r"^\S{20,}$")
        # What notesd.socket would create: the socket's directory, reachable by nginx's group.
        if not os.path.isdir(RUN_DIR):
            type(self).made_run_dir = True
        sh(["install", "-d", "-o", "notesd", "-g", "www-data", "-m", "2750", RUN_DIR])
        notesd = self.start(["setpriv", "--reuid=notesd", "--regid=notesd", "--init-groups", "--",
                             "/usr/sbin/notesd", "--config", CONF], "notesd.log", cwd="/")
        port = free_port()
        conf = self.nginx_conf(port)
        sh(["nginx", "-t", "-c", conf])
        nginx = self.start(["nginx", "-c", conf, "-g", "daemon off;"], "nginx.log")
        base = "http://127.0.0.1:%d" % port
        deadline = time.monotonic() + 30
        while True:
            self.assertIsNone(notesd.poll(), "notesd exited:\n" + self.log("notesd.log"))
            self.assertIsNone(nginx.poll(), "nginx exited:\n" + self.log("nginx.log"))
            try:
                status, body = self.get(base + "/v2/notes?limit=10", token)
                if status == 200:
                    break
            except OSError:
                status, body = None, b""
            self.assertLess(time.monotonic(), deadline, "no 200 within 30 s: %s %r\n%s" %
                            (status, body[:300], self.log("notesd.log")))
            time.sleep(0.2)
        doc = json.loads(body)
        self.assertEqual(sorted(doc), ["next_page", "request_id", "results", "total"])
        self.assertRegex(doc["request_id"], r"^api-request-[0-9a-f-]{36}$")
        self.assertEqual(doc["total"], 25)
        self.assertEqual(len(doc["results"]), 10)
        self.assertIsInstance(doc["next_page"], str)
        for note in doc["results"]:
            self.assertIsInstance(note["id"], str)
            self.assertIsInstance(note["title"], str)
        # Without a token: the workers' JSON 401, through the same site.
        status, body = self.get(base + "/v2/notes")
        self.assertEqual(status, 401)
        self.assertIn("request_id", json.loads(body))
        # The installed OpenAPI document, without a token, from the file the site points at.
        status, body = self.get(base + "/v2/openapi.json")
        self.assertEqual(status, 200, body[:300])
        with open("/usr/share/notesd/openapi.json", "rb") as f:
            self.assertEqual(json.loads(body), json.loads(f.read()))
        self.assertTrue(json.loads(body)["openapi"].startswith("3.1."))
        # A path outside /v2: nginx's own JSON 404 from the installed error snippet.
        status, body = self.get(base + "/")
        self.assertEqual(status, 404)
        self.assertEqual(json.loads(body)["error_metadata"]["error_kind"], "NOT_FOUND")
        stop(nginx)
        stop(notesd)
        self.assertEqual(notesd.returncode, 0, self.log("notesd.log"))

    # ---- removal ----------------------------------------------------------------------------

    def test_7_remove_then_purge_leave_nothing(self):
        # An administrator enabled the site; purging must not leave nginx a dangling link.
        os.makedirs(os.path.dirname(ENABLED_SITE), exist_ok=True)
        if not os.path.lexists(ENABLED_SITE):
            os.symlink("../sites-available/notesd", ENABLED_SITE)
        sh(["apt-get", "remove", "-y", "-q", PKG], env=APT_ENV)
        self.assertFalse(installed(PKG))
        # remove keeps the configuration and the data.
        for path in (CONF, SECRET, SITE, STATE + "/notes.db"):
            self.assertTrue(os.path.exists(path), path)
        self.assertFalse(os.path.exists("/usr/sbin/notesd"))
        sh(["apt-get", "purge", "-y", "-q", PKG], env=APT_ENV)
        self.assertFalse(package_known(PKG))
        left = [f for f in self.files if os.path.lexists(f) and not os.path.isdir(f)]
        self.assertEqual(left, [], "files of the package left after purge")
        for path in (SECRET, "/etc/notesd", STATE, ENABLED_SITE, "/usr/share/notesd",
                     "/usr/share/doc/notesd"):
            self.assertFalse(os.path.lexists(path), path)
        # The service user stays, as Debian policy asks (no reuse of its id by a later user).
        self.assertEqual(sh(["id", "-un", "notesd"], check=False).stdout.strip(), "notesd")


if __name__ == "__main__":
    unittest.main()
