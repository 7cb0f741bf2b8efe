#!/usr/bin/env python3
"""The database servers of tools/bench.py, and its results of several backends side by side.

    python3 tools/bench_backends.py run [--backends sqlite,mysql,postgresql] [--output FILE] -- BENCH ARGS
    python3 tools/bench_backends.py merge [--output FILE] RESULTS.md...

`run` calls tools/bench.py once per backend (`--backend B --output BUILD/bench-results-B.md`,
the BENCH ARGS after `--` passed unchanged; one backend after the other, never at once) and then
merges the reports. `merge` puts bench.py reports (one per backend, from the same machine and
options) into one Markdown table: a row per scenario, for every report its req/s, p50 and p99 and
p50 / baseline of the same run. Written to --output (default: stdout only) and printed.

For bench.py, ServerBackend runs a throwaway MariaDB or PostgreSQL server with t/db/mariadb.sh or
t/db/postgresql.sh in a directory of the data cache (NOTESD_DB_MEMORY sizes its caches), and
server_info() names the backend and version of any database for the report header.
"""
import argparse
import os
import re
import sqlite3
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BACKENDS = ("sqlite", "mysql", "postgresql")
SCRIPTS = {"mysql": "mariadb.sh", "postgresql": "postgresql.sh"}


def _serverdb(srcdir):
    sys.path.insert(0, os.path.join(srcdir, "t", "e2e"))
    import serverdb
    return serverdb


def backend_of(conn):
    """sqlite, mysql or postgresql for a SOCI connection string (a plain path is SQLite)."""
    scheme = conn.split("://", 1)[0].lower() if "://" in conn else "sqlite3"
    return {"sqlite3": "sqlite", "sqlite": "sqlite", "mariadb": "mysql", "postgres": "postgresql"}.get(scheme, scheme)


class ServerBackend:
    """A server of t/db/<script> kept in `folder`: start() returns its connection string, stop()
    is idempotent. The server runs in a session of its own, so a Ctrl-C reaches only bench.py,
    whose `finally` then stops it cleanly."""

    def __init__(self, srcdir, backend, folder, memory):
        self.script = os.path.join(srcdir, "t", "db", SCRIPTS[backend])
        self.backend, self.folder, self.memory = backend, folder, memory

    def _run(self, *args, timeout=120):
        env = dict(os.environ, NOTESD_DB_MEMORY=self.memory)
        return subprocess.run([self.script] + list(args), capture_output=True, text=True, env=env,
                              timeout=timeout, start_new_session=True)

    def start(self):
        p = self._run("start", self.folder)
        lines = p.stdout.strip().splitlines()
        if p.returncode != 0 or not lines or "://" not in lines[-1]:
            raise RuntimeError("%s start %s failed (%d): %s" % (self.script, self.folder, p.returncode,
                                                                 (p.stderr or p.stdout)[-2000:]))
        return lines[-1].strip()  # never through a shell: it holds spaces

    def stop(self):
        p = self._run("stop", self.folder)
        if p.returncode != 0:
            print("bench: %s stop failed: %s" % (self.script, p.stderr[-500:]), file=sys.stderr)


def after_import(srcdir, conn):
    """Statistics as a long-running server would have them (autovacuum, InnoDB's automatic
    statistics), so that plans do not depend on when the background jobs last ran."""
    backend = backend_of(conn)
    if backend == "sqlite":
        return
    sdb = _serverdb(srcdir)
    if backend == "mysql":
        tables = sdb.client_sql(conn, "SHOW TABLES").split()
        sdb.client_sql(conn, "ANALYZE TABLE %s" % ", ".join("`%s`" % t for t in tables), timeout=3600)
    else:
        sdb.client_sql(conn, "VACUUM ANALYZE", timeout=3600)


def database_bytes(srcdir, conn):
    """Size of the notesd database on a server (data + indexes), or None."""
    backend = backend_of(conn)
    if backend == "sqlite":
        return None
    sql = {"mysql": "SELECT SUM(data_length + index_length) FROM information_schema.tables "
                    "WHERE table_schema = DATABASE()",
           "postgresql": "SELECT pg_database_size(current_database())"}[backend]
    return int(float(_serverdb(srcdir).client_sql(conn, sql).strip() or 0))


def server_info(srcdir, conn):
    """`backend: version (cache settings)` for the report header."""
    backend = backend_of(conn)
    if backend == "sqlite":
        return "sqlite: SQLite %s (the system's libsqlite3)" % sqlite3.sqlite_version
    sdb = _serverdb(srcdir)
    if backend == "mysql":
        v, pool = sdb.client_sql(conn, "SELECT VERSION(), @@innodb_buffer_pool_size").split()
        return "mysql: MariaDB %s (innodb_buffer_pool_size %d MB)" % (v, int(pool) // 1048576)
    out = sdb.client_sql(conn, "SELECT current_setting('server_version'), current_setting('shared_buffers'),"
                               " current_setting('effective_cache_size'), current_setting('work_mem')")
    v, shared, cache, work = out.strip().split("\t")
    return "postgresql: PostgreSQL %s (shared_buffers %s, effective_cache_size %s, work_mem %s)" % (
        v, shared, cache, work)


# ---- merging reports ------------------------------------------------------------------------

def parse_report(path):
    """(backend line of the header, {scenario: row dict}, [scenario order]) of a bench.py
    report; reports from before --backend are SQLite."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^- backend: \w+: (.*)$", text, re.M)
    label = m.group(1) if m else "SQLite"
    head, rows, order = None, {}, []
    for line in text.splitlines():
        if not line.startswith("|"):
            if head and rows:
                break  # the first table only: the second one holds single requests
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == "scenario":
            head = cells
        elif head and not cells[0].startswith("---"):
            rows[cells[0]] = dict(zip(head, cells))
            order.append(cells[0])
    if not rows:
        raise ValueError("%s: no scenario table found" % path)
    return label, rows, order


def merge(paths):
    reports = [parse_report(p) for p in paths]
    order = []
    for _, _, o in reports:
        order += [s for s in o if s not in order]
    cols = ("req/s", "p50 ms", "p99 ms", "p50 / baseline")
    head = ["scenario"] + ["%s %s" % (label.split()[0], c) for label, _, _ in reports for c in cols]
    lines = ["| " + " | ".join(head) + " |", "| --- |" + " ---: |" * (len(head) - 1)]
    for s in order:
        cells = [s] + [rows.get(s, {}).get(c, "-") for _, rows, _ in reports for c in cols]
        lines.append("| " + " | ".join(cells) + " |")
    sources = ["- %s (`%s`)" % (label, os.path.basename(p)) for (label, _, _), p in zip(reports, paths)]
    return "\n".join(["Reports merged:", ""] + sources + [""] + lines) + "\n"


def write(text, output):
    if output:
        with open(output, "w", encoding="utf-8") as f:
            f.write(text)
        print("bench: written to " + output, file=sys.stderr)
    sys.stdout.write(text)


def run_all(a, bench_args):
    """bench.py once per backend, then the merge; stops at the first failure."""
    builddir = os.getcwd()
    for i, x in enumerate(bench_args):  # the reports go where bench.py puts its build products
        if x == "--builddir" and i + 1 < len(bench_args):
            builddir = bench_args[i + 1]
        elif x.startswith("--builddir="):
            builddir = x.split("=", 1)[1]
    outputs = []
    for b in a.backends.split(","):
        out = os.path.join(os.path.abspath(builddir), "bench-results-%s.md" % b)
        cmd = [sys.executable, os.path.join(HERE, "bench.py")] + bench_args + ["--backend", b, "--output", out]
        print("bench: " + " ".join(cmd), file=sys.stderr, flush=True)
        if subprocess.run(cmd, stdout=subprocess.DEVNULL).returncode != 0:
            sys.exit("bench: the %s run failed" % b)
        outputs.append(out)
    write(merge(outputs), a.output or os.path.join(os.path.abspath(builddir), "bench-results-backends.md"))


def main(argv=None):
    ap = argparse.ArgumentParser(description="bench.py on several backends; merge its reports (see the docstring)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("merge", help="merge bench.py reports into one side-by-side table")
    m.add_argument("reports", nargs="+")
    m.add_argument("--output", help="write the table here too")
    r = sub.add_parser("run", help="bench.py once per backend, then merge (bench.py options after --)")
    r.add_argument("--backends", default=",".join(BACKENDS))
    r.add_argument("--output", help="merged table (default BUILDDIR/bench-results-backends.md)")
    r.add_argument("bench_args", nargs=argparse.REMAINDER)
    a = ap.parse_args(argv)
    if a.cmd == "merge":
        write(merge(a.reports), a.output)
    else:
        bad = [b for b in a.backends.split(",") if b not in BACKENDS]
        if bad:
            sys.exit("bench: unknown backend(s) %s; known: %s" % (", ".join(bad), ", ".join(BACKENDS)))
        run_all(a, a.bench_args[1:] if a.bench_args[:1] == ["--"] else a.bench_args)


if __name__ == "__main__":
    main()
