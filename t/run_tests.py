#!/usr/bin/env python3
"""The whole test suite, as `make check` runs it:

    python3 t/run_tests.py --srcdir S --builddir B

Parts, in order:
  layout        t/check_layout.py: every file of src/ against the layer rule, the library rule
                and the size limits (one test per rule and file), after a self-test that
                plants violations and expects each one found
  openapi       doc/openapi.yaml linted by Redocly's CLI (tools/openapi, pinned; `make
                lint-openapi`), and B/doc/openapi.json (what nginx serves) checked to be that YAML
  unit          B/t/unit_tests (Boost.Test), counted test case by test case from its XML report
  store (X)     `unit_tests --run_test=store:store_search:store_merge:store_pending` again with NOTESD_TEST_DB set, once
                per database server given in the environment: NOTESD_TEST_MYSQL,
                NOTESD_TEST_PGSQL (SOCI connection strings)
  e2e           every t/e2e/test_*.py (stdlib unittest; each test method counts one), each
                module in its own process with a time limit, on SQLite
  e2e recycle   the e2e modules that use the API again with every pool at max_requests=1
                (skip with --no-recycle or NOTESD_TEST_RECYCLE=0)
  e2e (X)       the e2e suite again on each server of NOTESD_TEST_MYSQL / NOTESD_TEST_PGSQL
                (NOTESD_E2E_DB=mysql|postgresql: every stack gets a fresh database there), less
                the tests EXCLUDED lists for that backend
  fuzz          each libFuzzer target of fuzz/ (built with ASan and UBSan) replays its seed
                corpus fuzz/corpus/NAME once, one test per target: every input must run without
                a sanitizer report or a failed property (`--fuzz-dir B/fuzz`, which `make check`
                passes when configure found clang's libFuzzer)
  e2e asan      the e2e suite on SQLite again against the binaries of a second build tree
                configured with --enable-sanitizers (`--asan-builddir DIR` or
                NOTESD_TEST_ASAN_BUILDDIR; CI sets it): ASan and UBSan reports are fatal and
                written to files, each one a failure of the module that caused it
  fault         the fault matrix: every t/fault/test_*.py (floods, slow clients, killed and
                stuck workers, storage faults...; see t/fault/faultlib.py), each module in its
                own process like an e2e module. Rows needing database servers loop over the
                servers of the environment themselves. Slow: only with --only fault
                (`make check-fault`) or NOTESD_TEST_FAULT=1 (CI sets it)
  package       t/package/test_package.py: builds the Debian package (dpkg-buildpackage, once),
                lintian, installs it, serves through the installed site, purges. It changes the
                machine (as root), so it runs only with NOTESD_TEST_PACKAGE=1 (.ci/run sets it);
                once enabled, whatever goes wrong fails it

Every e2e (and fault-tier probe) response is checked against the OpenAPI document (t/e2e/openapi_check.py): a test
during which a mismatch was recorded fails even if it caught the exception, and a mismatch
outside any test (setUpClass) fails the module.

The output ends with exactly one line `N passed, N failed` counting every test of every part.
A part that cannot run (missing binary, crash, timeout, a server that does not answer although
its variable is set) counts as failed, never as skipped; the exit status is 1 when anything
failed. Details go to B/t/test-results/.
"""
import argparse
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import unittest
import xml.etree.ElementTree as ET

STORE_BACKENDS = (("mysql", "NOTESD_TEST_MYSQL"), ("pgsql", "NOTESD_TEST_PGSQL"))
STORE_SUITES = "store:store_search:store_merge:store_pending"
# e2e backends: (name for NOTESD_E2E_DB, the variable holding the server's connection string)
E2E_SERVERS = (("mysql", "NOTESD_TEST_MYSQL"), ("postgresql", "NOTESD_TEST_PGSQL"))
UNIT_TIMEOUT_S = 600
E2E_MODULE_TIMEOUT_S = 900
# The package part builds notesd from scratch (about 5 minutes on 2 cores) before its tests.
PACKAGE_TIMEOUT_S = 1800
# Modules that only test files or supervise pools with settings of their own: not repeated
# in the max_requests=1 pass.
NOT_RECYCLED = ("test_systemd", "test_supervisor", "test_backends", "test_relevance",
                "test_status")
# Per backend, the e2e modules or classes (test id prefixes) that do not run there. They are
# left out of the run, not skipped inside it: a skip would hide a test that ought to run.
SERVER_EXCLUDED = (
    "test_systemd",                     # unit files only: nothing depends on the database
    "test_relevance",                   # runs every backend of the environment by itself
    "test_supervisor.LockedDatabase",   # SQLite's file locks: no such thing on a server
    "test_supervisor.WriterWait",       # the same (SQLite's write lock; the store suite's
                                        # lock_wait_is_unavailable has the servers' row locks)
    "test_supervisor.Deadline",         # the same (WAL read-mark locks)
    "test_supervisor.DurableWrites",    # SQLite's WAL syncs (the servers' own settings decide)
)
EXCLUDED = {
    "sqlite": ("test_backends",),       # database-server faults and several hosts
    "mysql": SERVER_EXCLUDED,
    "postgresql": SERVER_EXCLUDED,
}


# Sanitizer reports go to files (ASan/LSan log_path: PREFIX.PID), so that a report of a worker
# that the supervisor replaced, or of a process whose output a test discards, is still seen.
# GCC's UBSan beside ASan ignores log_path and writes to stderr: the harness copies a notesd log
# holding one into report_dir (NOTESD_E2E_SANITIZER_DIR), and abort_on_error makes any other
# process it stops die of SIGABRT rather than exit with status 1, which a test may expect.
def sanitizer_env(env, report_dir):
    prefix = os.path.join(report_dir, "report")
    return dict(env,
                ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:log_path=" + prefix,
                UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=" + prefix,
                LSAN_OPTIONS="log_path=" + prefix,
                NOTESD_E2E_SANITIZER_DIR=report_dir)


def take_sanitizer_reports(report_dir):
    """[(file name, first line naming the error)] of the reports in report_dir (log_path files,
    notesd logs the harness kept), which are moved beside it (results_dir/asan-reports-NAME) so
    that the next module starts with none."""
    found = []
    for name in sorted(os.listdir(report_dir)):
        path = os.path.join(report_dir, name)
        with open(path, errors="replace") as f:
            text = f.read()
        lines = [l for l in text.splitlines() if "Sanitizer" in l or "runtime error:" in l]
        found.append((name, (lines[0] if lines else text[:200]).strip()))
        os.rename(path, os.path.join(os.path.dirname(report_dir), os.path.basename(report_dir)
                                     + "-" + name))
    return found


class Part:
    """One line of the summary: a name, passed/failed counts and the names of failures."""

    def __init__(self, name):
        self.name, self.passed, self.failed, self.skipped = name, 0, 0, 0
        self.failures = []   # (test name, one-line reason)
        self.note = ""

    def fail(self, test, reason):
        self.failed += 1
        self.failures.append((test, reason))


def say(*args):
    print(*args, flush=True)


def run_with_timeout(cmd, timeout, env=None, cwd=None, log_path=None):
    """Runs cmd in its own process group; returns (exit status or None on timeout, seconds)."""
    t0 = time.monotonic()
    log = open(log_path, "wb") if log_path else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            rc = proc.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            rc = None
        else:
            # Whatever the run left behind in its group (stray servers) goes too.
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    finally:
        if log_path:
            log.close()
    return rc, time.monotonic() - t0


# ---- Boost.Test ---------------------------------------------------------------------------

def boost_cases(xml_path):
    """[(suite/case name, result)] from a --report_level=detailed XML report."""
    root = ET.parse(xml_path).getroot()
    out = []

    def walk(node, prefix):
        for child in node:
            name = child.get("name", "")
            if child.tag == "TestSuite":
                walk(child, prefix + name + "/")
            elif child.tag == "TestCase":
                out.append((prefix + name, child.get("result", "")))

    for top in root:  # the master suite (BOOST_TEST_MODULE) is not part of the names
        if top.tag == "TestSuite":
            walk(top, "")
        elif top.tag == "TestCase":
            out.append((top.get("name", ""), top.get("result", "")))
    return out


def run_boost(part, binary, results_dir, tag, extra_args=(), env=None):
    if not os.access(binary, os.X_OK):
        part.fail(tag, "%s is not built" % binary)
        return
    xml_path = os.path.join(results_dir, tag + ".xml")
    log_path = os.path.join(results_dir, tag + ".log")
    if os.path.exists(xml_path):
        os.unlink(xml_path)
    cmd = [binary, "--log_level=error", "--report_format=XML", "--report_level=detailed",
           "--report_sink=" + xml_path] + list(extra_args)
    rc, secs = run_with_timeout(cmd, UNIT_TIMEOUT_S, env=env, log_path=log_path)
    part.note = "%.1f s, log %s" % (secs, log_path)
    cases = []
    try:
        cases = boost_cases(xml_path)
    except (OSError, ET.ParseError) as e:
        part.fail(tag, "no readable XML report (%s); exit status %s" % (e.__class__.__name__, rc))
    for name, result in cases:
        if result == "passed":
            part.passed += 1
        elif result == "skipped":
            part.skipped += 1
        else:  # failed, aborted (a crash inside a case), or anything unknown
            part.fail(name, result or "no result")
    if rc is None:
        part.fail(tag, "timed out after %d s" % UNIT_TIMEOUT_S)
    elif rc != 0 and not part.failed:
        part.fail(tag, "exit status %d although every case passed (crash at exit?)" % rc)
    elif rc == 0 and cases and part.failed:
        part.fail(tag, "exit status 0 although cases failed")
    elif not cases and rc == 0:
        part.fail(tag, "ran no test case")


# ---- unittest (e2e) ---------------------------------------------------------------------------

class RecordingResult(unittest.TextTestResult):
    """Keeps one outcome per test id: passed, failed (with the reason), or skipped."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.outcomes = {}
        self.attributed_mismatches = 0

    def _set(self, test, outcome, detail=""):
        tid = test.id()
        # A test with failing subtests, or failing in tearDown after passing, stays failed.
        if self.outcomes.get(tid, ("",))[0] == "failed" and outcome == "passed":
            return
        self.outcomes[tid] = (outcome, detail)

    def startTest(self, test):
        super().startTest(test)
        self._mismatch_mark = len(openapi_mismatches())

    def stopTest(self, test):
        new = openapi_mismatches()[getattr(self, "_mismatch_mark", 0):]
        self.attributed_mismatches += len(new)
        if new and self.outcomes.get(test.id(), ("",))[0] in ("passed", "skipped"):
            self.outcomes[test.id()] = ("failed", "response not as documented: " + new[0])
        super().stopTest(test)

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record_error(test, err)

    def addError(self, test, err):
        super().addError(test, err)
        self._record_error(test, err)

    def _record_error(self, test, err):
        text = "".join(traceback.format_exception_only(err[0], err[1])).strip()
        detail = text.splitlines()[-1] if text else "error"
        if isinstance(test, unittest.TestCase):
            self._set(test, "failed", detail)
        else:  # setUpClass/setUpModule failure: _ErrorHolder; charged to the tests later
            self.outcomes["__fixture__ " + str(test)] = ("fixture", detail)

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            text = "".join(traceback.format_exception_only(err[0], err[1])).strip()
            self._set(test, "failed", "%s: %s" % (subtest._subDescription(),
                                                  text.splitlines()[-1] if text else "error"))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "skipped", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, "passed")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, "failed", "unexpected success")


def openapi_mismatches():
    """The OpenAPI mismatches the e2e harness recorded in this process so far."""
    module = sys.modules.get("openapi_check")
    return module.MISMATCHES if module else []


def iter_tests(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from iter_tests(t)
        else:
            yield t


def run_module_inprocess(module_path, result_path):
    """Child mode: runs one test module and writes {test id: [outcome, detail]} as JSON."""
    sys.dont_write_bytecode = True
    sys.path.insert(0, os.path.dirname(module_path))
    name = os.path.splitext(os.path.basename(module_path))[0]
    outcomes = {}
    try:
        spec = importlib.util.spec_from_file_location(name, module_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
        excluded = tuple(p + "." for p in os.environ.get("NOTESD_E2E_EXCLUDE", "").split(",") if p)
        if excluded:
            suite = unittest.TestSuite(t for t in iter_tests(suite)
                                       if not t.id().startswith(excluded))
        all_ids = [t.id() for t in iter_tests(suite)]
        runner = unittest.TextTestRunner(stream=sys.stdout, verbosity=2,
                                         resultclass=RecordingResult)
        result = runner.run(suite)
        fixture = [d for k, (o, d) in result.outcomes.items() if o == "fixture"]
        for tid in all_ids:
            outcomes[tid] = result.outcomes.get(
                tid, ("failed", "did not run: " + (fixture[0] if fixture else "unknown reason")))
        if not all_ids:
            outcomes[name] = ("failed", "no tests found")
        checker = sys.modules.get("openapi_check")
        if checker:
            print("openapi: %d responses checked against the document, %d did not match"
                  % (checker.CHECKED, len(checker.MISMATCHES)))
        outside = len(openapi_mismatches()) - result.attributed_mismatches
        if outside > 0:  # in setUpClass/tearDownClass: charged to the module
            outcomes[name + ".openapi"] = ("failed", "%d response(s) outside tests not as "
                                           "documented, e.g. %s" % (outside, openapi_mismatches()[-1]))
    except Exception:  # noqa: BLE001 (an import error fails the whole module)
        traceback.print_exc()
        outcomes[name] = ("failed", "could not load: " + traceback.format_exc().splitlines()[-1])
    with open(result_path, "w") as f:
        json.dump(outcomes, f)
    sys.stdout.flush()
    # Stacks and stray threads are cleaned up by atexit in the harness.
    return 0


def kill_leftovers(registry):
    """Kills the process groups (notesd, nginx) a test module started and did not stop."""
    left = []
    # Processes first (they hold database connections), then databases, then directories.
    for name in sorted(os.listdir(registry),
                       key=lambda n: (n.startswith("dir."), n.startswith("db."))):
        path = os.path.join(registry, name)
        if name.startswith("db."):  # a server database a stack created and did not drop
            drop_registered_database(path)
            os.unlink(path)
            continue
        if name.startswith("dir."):  # a stack's temp dir, after its servers are gone
            with open(path) as f:
                shutil.rmtree(f.read().strip(), ignore_errors=True)
            os.unlink(path)
            continue
        try:
            with open(path) as f:
                args = f.read()
            with open("/proc/%s/cmdline" % name, "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            cmdline = ""
        # Only if the pid still runs what we started (pids get reused).
        if cmdline and os.path.basename(args.split()[0]) in cmdline:
            try:
                os.killpg(int(name), signal.SIGKILL)
                left.append(args)
            except (ProcessLookupError, PermissionError):
                pass
        os.unlink(path)
    return left


def serverdb_module():
    """t/e2e/serverdb.py (database servers for the e2e tests), imported once."""
    if "serverdb" not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "e2e", "serverdb.py")
        spec = importlib.util.spec_from_file_location("serverdb", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["serverdb"] = module
    return sys.modules["serverdb"]


def drop_registered_database(path):
    try:
        serverdb_module().drop_registered(path)
    except Exception as e:  # noqa: BLE001 (the run goes on; the name is in the message)
        say("warning: could not drop the test database of %s: %s" % (path, e))


def server_answers(conn):
    """'' when the database server of conn runs SQL, else why not."""
    try:
        serverdb_module().client_sql(conn, "SELECT 1", timeout=30)
        return ""
    except Exception as e:  # noqa: BLE001
        return str(e).splitlines()[0][:300] if str(e) else e.__class__.__name__


def test_modules(directory, selected=None):
    """The test_*.py files of a directory, only those named in `selected` when given."""
    modules = sorted(f for f in os.listdir(directory)
                     if f.startswith("test_") and f.endswith(".py"))
    if selected:
        modules = [m for m in modules if m[:-3] in selected or m in selected]
    return modules


def no_modules(name, directory):
    """The failed part of a tier whose directory holds no test module."""
    part = Part(name)
    part.fail(name, "no test modules found in " + directory)
    print_part(part)
    return part


def module_selected(name, excluded):
    """Whether module `name` runs when test ids starting with `excluded` are left out."""
    return name not in excluded


def run_e2e_module(part, module_path, results_dir, env, tag, timeout=E2E_MODULE_TIMEOUT_S):
    name = os.path.splitext(os.path.basename(module_path))[0]
    result_path = os.path.join(results_dir, tag + ".json")
    log_path = os.path.join(results_dir, tag + ".log")
    if os.path.exists(result_path):
        os.unlink(result_path)
    # In the results directory, not /tmp: a sweep of /tmp (another job cleaning its leftovers)
    # must not take the list of what this module started.
    registry = tempfile.mkdtemp(prefix="registry-" + tag + "-", dir=results_dir)
    env = dict(env, NOTESD_E2E_REGISTRY=registry)
    cmd = [sys.executable, "-B", os.path.abspath(__file__), "--run-module", module_path,
           "--result", result_path]
    rc, secs = run_with_timeout(cmd, timeout, env=env, log_path=log_path)
    left = kill_leftovers(registry)
    os.rmdir(registry)
    if left:
        part.fail(name, "left servers running: " + "; ".join(a[:80] for a in left))
    part.note = "%.1f s, log %s" % (secs, log_path)
    try:
        with open(result_path) as f:
            outcomes = json.load(f)
    except (OSError, ValueError):
        reason = "timed out after %d s" % timeout if rc is None else \
            "crashed (exit status %s) before reporting" % rc
        part.fail(name, reason)
        return
    for tid, (outcome, detail) in sorted(outcomes.items()):
        if outcome == "passed":
            part.passed += 1
        elif outcome == "skipped":
            part.skipped += 1
        else:
            part.fail(tid, detail)
    if rc is None:
        part.fail(name, "timed out after %d s" % timeout)


# ---- OpenAPI document -------------------------------------------------------------------------

def run_openapi(part, srcdir, builddir, results_dir):
    """Redocly's lint of doc/openapi.yaml, and the built JSON being that very YAML."""
    yaml_path = os.path.join(srcdir, "doc", "openapi.yaml")
    redocly = os.path.join(srcdir, "tools", "openapi", "node_modules", ".bin", "redocly")
    log_path = os.path.join(results_dir, "openapi-lint.log")
    if not os.access(redocly, os.X_OK):
        part.fail("lint doc/openapi.yaml", "%s is not installed: run tools/install-deps.sh "
                  "(npm ci in tools/openapi)" % redocly)
    else:
        cmd = [redocly, "lint", "--format=stylish", "--config",
               os.path.join(srcdir, "tools", "openapi", "redocly.yaml"), yaml_path]
        rc, secs = run_with_timeout(cmd, 300, log_path=log_path)
        part.note = "%.1f s, log %s" % (secs, log_path)
        if rc == 0:
            part.passed += 1
        else:
            with open(log_path, errors="replace") as f:
                errors = [l.strip() for l in f if " error " in l]
            part.fail("lint doc/openapi.yaml", "redocly lint: %s" % (
                "; ".join(errors[:3]) or "exit status %s" % rc))
    json_path = os.path.join(builddir, "doc", "openapi.json")
    proc = subprocess.run([sys.executable, os.path.join(srcdir, "tools", "openapi", "yaml2json.py"),
                           yaml_path], capture_output=True, text=True)
    try:
        with open(json_path) as f:
            built = json.load(f)
    except (OSError, ValueError) as e:
        part.fail("doc/openapi.json", "not built: %s" % e)
        return
    if proc.returncode != 0:
        part.fail("doc/openapi.json", proc.stderr.strip()[:300])
    elif json.loads(proc.stdout) != built:
        part.fail("doc/openapi.json", "%s differs from doc/openapi.yaml: run make" % json_path)
    else:
        part.passed += 1


# ---- fuzz corpora ------------------------------------------------------------------------------

FUZZ_TIMEOUT_S = 600


def run_fuzz_corpora(fuzz_dir, srcdir, results_dir):
    """One test per target: its libFuzzer binary runs every seed of fuzz/corpus/NAME once."""
    corpus_root = os.path.join(srcdir, "fuzz", "corpus")
    part = Part("fuzz corpora (ASan+UBSan)")
    names = sorted(os.listdir(corpus_root)) if os.path.isdir(corpus_root) else []
    if not names:
        part.fail("fuzz", "no seed corpora in " + corpus_root)
    inputs = 0
    t0 = time.monotonic()
    for name in names:
        binary = os.path.join(fuzz_dir, name + "_fuzzer")
        seeds = sorted(os.path.join(corpus_root, name, f)
                       for f in os.listdir(os.path.join(corpus_root, name)))
        if not os.access(binary, os.X_OK):
            part.fail(name, "%s is not built" % binary)
            continue
        log_path = os.path.join(results_dir, "fuzz-%s.log" % name)
        env = dict(os.environ, ASAN_OPTIONS="halt_on_error=1:detect_leaks=1",
                   UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
        rc, _ = run_with_timeout([binary] + seeds, FUZZ_TIMEOUT_S, env=env, log_path=log_path)
        with open(log_path, errors="replace") as f:
            text = f.read()
        ran = text.count("\nExecuted ")
        bad = [l for l in text.splitlines()
               if "ERROR:" in l or "runtime error" in l or "property failed" in l]
        if rc == 0 and ran == len(seeds) and seeds and not bad:
            part.passed += 1
            inputs += ran
        elif rc is None:
            part.fail(name, "timed out after %d s (log %s)" % (FUZZ_TIMEOUT_S, log_path))
        else:
            part.fail(name, "%s (exit status %s, %d of %d inputs ran; log %s)"
                      % (bad[0].strip() if bad else "no report", rc, ran, len(seeds), log_path))
    part.note = "%d inputs, %.1f s" % (inputs, time.monotonic() - t0)
    return part


# ---- driver -----------------------------------------------------------------------------------

def run_layout_check(part, srcdir):
    """The checks of t/check_layout.py, each (rule, file) pair one test."""
    t0 = time.monotonic()
    try:
        spec = importlib.util.spec_from_file_location(
            "check_layout", os.path.join(srcdir, "t", "check_layout.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        results = module.self_test() + module.check(srcdir)
    except Exception as e:  # noqa: BLE001 - a checker that cannot run fails the part
        part.fail("layout", "t/check_layout.py failed: %s: %s" % (e.__class__.__name__, e))
        return
    for name, problems in results:
        if problems:
            part.fail(name, "; ".join(problems))
        else:
            part.passed += 1
    part.note = "%.1f s, python3 t/check_layout.py" % (time.monotonic() - t0)
    if not results:
        part.fail("layout", "checked no file")

def run_package_part(parts, srcdir, builddir, results_dir):
    """The Debian package part: runs by default with NOTESD_TEST_PACKAGE=1 (it installs and
    purges a package as root); asked for by --only package without it, it fails."""
    enabled = os.environ.get("NOTESD_TEST_PACKAGE", "") == "1"
    part = Part("package")
    parts.append(part)
    if not enabled:
        part.fail("package", "needs NOTESD_TEST_PACKAGE=1 (installs and purges notesd as root)")
    elif os.geteuid() != 0:
        part.fail("package", "NOTESD_TEST_PACKAGE=1 but not running as root")
    else:
        facts = os.path.join(results_dir, "package-facts.json")
        if os.path.exists(facts):
            os.unlink(facts)
        env = dict(os.environ, NOTESD_SRCDIR=srcdir, NOTESD_BUILDDIR=builddir,
                   NOTESD_PACKAGE_FACTS=facts, PYTHONDONTWRITEBYTECODE="1")
        run_e2e_module(part, os.path.join(srcdir, "t", "package", "test_package.py"), results_dir,
                       env, "package", timeout=PACKAGE_TIMEOUT_S)
        try:
            with open(facts) as f:
                got = json.load(f)
            part.note = "build %s s, exposure %s; %s" % (got.get("build_s", "?"),
                                                         got.get("exposure", "?"), part.note)
        except (OSError, ValueError):
            pass
    print_part(part)


def print_part(part):
    extra = ", %d skipped" % part.skipped if part.skipped else ""
    say("%-34s %d passed, %d failed%s  (%s)" % (part.name + ":", part.passed, part.failed,
                                                extra, part.note))
    for test, reason in part.failures[:40]:
        say("    FAIL %s: %s" % (test, reason[:300]))
    if len(part.failures) > 40:
        say("    ... and %d more" % (len(part.failures) - 40))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--srcdir", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--builddir", default=".")
    ap.add_argument("--only", choices=("layout", "openapi", "unit", "store", "fuzz", "e2e", "fault",
                                       "package"),
                    action="append",
                    help="run only these parts (repeatable)")
    ap.add_argument("--e2e", action="append", metavar="NAME",
                    help="run only these e2e or fault modules, e.g. test_nginx (repeatable)")
    ap.add_argument("--no-recycle", action="store_true",
                    help="skip the e2e pass with max_requests=1")
    ap.add_argument("--fuzz-dir", help="replay the seed corpora with the libFuzzer targets here")
    ap.add_argument("--asan-builddir", default=os.environ.get("NOTESD_TEST_ASAN_BUILDDIR"),
                    help="also run the e2e suite on SQLite against this --enable-sanitizers build")
    ap.add_argument("--run-module", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.run_module:
        return run_module_inprocess(args.run_module, args.result)

    srcdir = os.path.abspath(args.srcdir)
    builddir = os.path.abspath(args.builddir)
    results_dir = os.path.join(builddir, "t", "test-results")
    os.makedirs(results_dir, exist_ok=True)
    default_parts = ("layout", "openapi", "unit", "store", "fuzz", "e2e")
    if os.environ.get("NOTESD_TEST_FAULT", "0") == "1":
        default_parts += ("fault",)
    if os.environ.get("NOTESD_TEST_PACKAGE", "0") == "1":
        default_parts += ("package",)
    parts_wanted = set(args.only or default_parts)
    shared = os.path.abspath(os.environ.get("NOTESD_SHARED") or os.path.join(srcdir, "..", "shared"))
    unit_bin = os.path.join(builddir, "t", "unit_tests")
    parts = []
    t0 = time.monotonic()

    if "layout" in parts_wanted:
        part = Part("layout")
        run_layout_check(part, srcdir)
        parts.append(part)
        print_part(part)

    if "openapi" in parts_wanted:
        part = Part("openapi")
        run_openapi(part, srcdir, builddir, results_dir)
        parts.append(part)
        print_part(part)

    if "unit" in parts_wanted:
        part = Part("unit")
        run_boost(part, unit_bin, results_dir, "unit")
        parts.append(part)
        print_part(part)

    if "store" in parts_wanted:
        for backend, var in STORE_BACKENDS:
            conn = os.environ.get(var)
            if not conn:
                continue
            part = Part("store (%s)" % backend)
            env = dict(os.environ, NOTESD_TEST_DB=conn)
            run_boost(part, unit_bin, results_dir, "store-" + backend,
                      ["--run_test=" + STORE_SUITES], env)
            parts.append(part)
            print_part(part)

    if "fuzz" in parts_wanted and args.fuzz_dir:
        part = run_fuzz_corpora(os.path.abspath(args.fuzz_dir), srcdir, results_dir)
        parts.append(part)
        print_part(part)

    env = dict(os.environ, NOTESD_SRCDIR=srcdir, NOTESD_BUILDDIR=builddir,
               NOTESD_SHARED=shared, PYTHONDONTWRITEBYTECODE="1")
    env.pop("NOTESD_E2E_SET", None)
    env.pop("NOTESD_E2E_DB", None)

    if "e2e" in parts_wanted:
        e2e_dir = os.path.join(srcdir, "t", "e2e")
        modules = test_modules(e2e_dir, args.e2e)
        recycle = not args.no_recycle and os.environ.get("NOTESD_TEST_RECYCLE", "1") != "0"
        # (label, result file prefix, environment, modules or test ids left out, server)
        passes = [("e2e", "e2e-", env, EXCLUDED["sqlite"], None)]
        if recycle:
            passes.append(("e2e max_requests=1", "e2e-recycle-",
                           dict(env, NOTESD_E2E_SET="max_requests=1"),
                           EXCLUDED["sqlite"] + NOT_RECYCLED, None))
        if args.asan_builddir:
            report_dir = os.path.join(results_dir, "asan-reports")
            shutil.rmtree(report_dir, ignore_errors=True)
            os.makedirs(report_dir)
            passes.append(("e2e asan", "e2e-asan-",
                           sanitizer_env(dict(env, NOTESD_BUILDDIR=os.path.abspath(args.asan_builddir)),
                                         report_dir),
                           EXCLUDED["sqlite"], None))
        for backend, var in E2E_SERVERS:
            conn = os.environ.get(var, "").strip()
            if conn:
                passes.append(("e2e (%s)" % backend, "e2e-%s-" % backend,
                               dict(env, NOTESD_E2E_DB=backend), EXCLUDED[backend], conn))
        for label, prefix, pass_env, excluded, server in passes:
            if server:
                why = server_answers(server)
                if why:  # every module would fail the same way, one by one
                    part = Part(label)
                    part.fail(label, "the database server does not answer: " + why)
                    parts.append(part)
                    print_part(part)
                    continue
            pass_env = dict(pass_env, NOTESD_E2E_EXCLUDE=",".join(excluded))
            for m in modules:
                name = m[:-3]
                if not module_selected(name, excluded):
                    continue
                part = Part("%s %s" % (label, name))
                run_e2e_module(part, os.path.join(e2e_dir, m), results_dir, pass_env,
                               prefix + name)
                if "ASAN_OPTIONS" in pass_env:
                    for report, line in take_sanitizer_reports(report_dir):
                        part.fail(name, "sanitizer report %s: %s" % (report, line))
                parts.append(part)
                print_part(part)
        if not modules and not args.e2e:
            parts.append(no_modules("e2e", e2e_dir))

    if "fault" in parts_wanted:
        fault_dir = os.path.join(srcdir, "t", "fault")
        modules = test_modules(fault_dir, args.e2e)
        for m in modules:
            part = Part("fault " + m[:-3])
            run_e2e_module(part, os.path.join(fault_dir, m), results_dir, env,
                           "fault-" + m[:-3])
            parts.append(part)
            print_part(part)
        if not modules and not args.e2e:
            parts.append(no_modules("fault", fault_dir))

    if "package" in parts_wanted:
        run_package_part(parts, srcdir, builddir, results_dir)

    passed = sum(p.passed for p in parts)
    failed = sum(p.failed for p in parts)
    say("(total %.0f s; details in %s)" % (time.monotonic() - t0, results_dir))
    say("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not parts else 0


if __name__ == "__main__":
    sys.exit(main())
