"""systemd/notesd.service and notesd.socket: `systemd-analyze verify` passes on them (with the
ExecStart path pointed at the built notesd and the project's man pages on MANPATH), a broken
copy fails, and the service stays hardened (`systemd-analyze security --offline`)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import BUILDDIR, SRCDIR  # noqa: E402

UNITS = ("notesd.service", "notesd.socket")
INSTALLED_NOTESD = "/usr/sbin/notesd"


def unit_text(name):
    with open(os.path.join(SRCDIR, "systemd", name)) as f:
        return f.read()


def directives(text):
    """key -> list of values of the unit file (comments skipped)."""
    out = {}
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", ";", "[")) and "=" in line:
            k, _, v = line.partition("=")
            out.setdefault(k.strip(), []).append(v.strip())
    return out


class SystemdUnits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.analyze = shutil.which("systemd-analyze")
        if not cls.analyze:
            raise RuntimeError("systemd-analyze not found (apt-get install systemd)")
        cls.tmp = tempfile.mkdtemp(prefix="notesd-units-")
        # The project's man pages, where man(1) finds them for Documentation=man:... checks.
        for section in ("5", "8"):
            os.makedirs(os.path.join(cls.tmp, "man", "man" + section))
        for page in os.listdir(os.path.join(SRCDIR, "doc")):
            if re.search(r"\.[58]$", page):
                os.symlink(os.path.join(SRCDIR, "doc", page),
                           os.path.join(cls.tmp, "man", "man" + page[-1], page))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def copy_units(self, subdir, notesd_path, extra=None):
        """Copies both units into tmp/subdir with ExecStart pointing at notesd_path."""
        d = os.path.join(self.tmp, subdir)
        os.makedirs(d)
        for name in UNITS:
            text = unit_text(name).replace(INSTALLED_NOTESD, notesd_path)
            if extra and name in extra:
                text += extra[name]
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
        return [os.path.join(d, name) for name in UNITS]

    def verify(self, paths):
        env = dict(os.environ, MANPATH=os.path.join(self.tmp, "man"))
        p = subprocess.run([self.analyze, "verify"] + paths, capture_output=True, text=True,
                           env=env, timeout=60)
        return p.returncode, (p.stdout + p.stderr).strip()

    def built_notesd(self):
        path = os.path.join(BUILDDIR, "notesd")
        self.assertTrue(os.access(path, os.X_OK), "notesd is not built: %s" % path)
        return path

    def test_verify_passes(self):
        rc, out = self.verify(self.copy_units("ok", self.built_notesd()))
        self.assertEqual(rc, 0, out)
        self.assertEqual(out, "", "verify printed warnings")

    def test_verify_catches_a_broken_unit(self):
        # Negative control: the same check fails when the binary is missing.
        rc, out = self.verify(self.copy_units("broken", "/nonexistent/notesd"))
        self.assertNotEqual(rc, 0, out)

    def test_committed_units_use_installed_path(self):
        d = directives(unit_text("notesd.service"))
        for key in ("ExecStart", "ExecStartPre"):
            self.assertTrue(d[key][0].startswith(INSTALLED_NOTESD + " "), d[key])
        self.assertIn("--check-config", d["ExecStartPre"][0])

    def test_service_stops_and_reloads_through_the_master(self):
        d = directives(unit_text("notesd.service"))
        self.assertEqual(d["Type"], ["simple"])
        self.assertEqual(d["KillMode"], ["mixed"])
        self.assertEqual(d["ExecReload"], ["/bin/kill -HUP $MAINPID"])
        stop = int(re.match(r"(\d+)s$", d["TimeoutStopSec"][0]).group(1))
        self.assertGreater(stop, 10, "must exceed notesd's default stop_timeout_ms (10 s)")
        self.assertIn("notesd.socket", d["Requires"][0])

    def test_socket_matches_default_listen_and_nginx_group(self):
        d = directives(unit_text("notesd.socket"))
        self.assertEqual(d["ListenStream"], ["/run/notesd/notesd.sock",
                                             "/run/notesd/notesd-status.sock"])
        self.assertEqual(d["SocketMode"], ["0660"])
        self.assertEqual(d["SocketGroup"], ["www-data"])
        with open(os.path.join(SRCDIR, "src", "base", "config.hpp")) as f:
            self.assertIn('"/run/notesd/notesd.sock"', f.read())

    def test_service_is_hardened(self):
        paths = self.copy_units("security", self.built_notesd())
        p = subprocess.run([self.analyze, "security", "--offline=yes", paths[0]],
                           capture_output=True, text=True, timeout=60)
        m = re.search(r"Overall exposure level for notesd.service: ([0-9.]+)", p.stdout)
        self.assertIsNotNone(m, p.stdout[-2000:] + p.stderr)
        self.assertLessEqual(float(m.group(1)), 2.0, p.stdout)
        d = directives(unit_text("notesd.service"))
        for key, value in (("NoNewPrivileges", "yes"), ("ProtectSystem", "strict"),
                           ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                           ("MemoryDenyWriteExecute", "yes"),
                           ("RestrictAddressFamilies", "AF_UNIX AF_INET AF_INET6")):
            self.assertEqual(d.get(key), [value], key)
        self.assertIn("@system-service", d["SystemCallFilter"])


if __name__ == "__main__":
    unittest.main()
