#!/usr/bin/env python3
"""Import benchmark: notesd's `notesctl import` against an SQLite FTS5 baseline, same notes.

    python3 tools/bench_import.py --srcdir SRC --builddir BUILD [--notes-per-user 100000]
                                  [--users 1] [--runs 1] [--seed 1] [--db SERVER]

The notes are tools/gen_notes.py's (the generator of make bench), cached as .jsonl files in
BUILD/bench-data/import-jsonl-*/. Every run imports them into fresh files in BUILD/bench-work/import/,
one engine after the other on the same machine state:
- notesd: `notesctl migrate`, `user add`, `notesctl import USER FILE` per user (SQLite);
- FTS5: Python's sqlite3, one `fts5(title, content, detail=full, tokenize='porter unicode61')`
  table fed row by row, committed every 1,000 notes like notesctl's batches (the file holds the
  notes' text too, as FTS5 keeps its content).
With --db (a MariaDB or PostgreSQL connection string whose role may create `notesd_*` databases,
as the e2e suite's), notesd imports into a fresh database `notesd_bench_import` on that server
instead, dropped again afterwards; its size is the server's data and index bytes.
It prints a Markdown table: seconds, notes/s, bytes on disk (the database files after the
import) and bytes per note for each, and notesd's ratio to FTS5. bench.py calls fts5_import()
on its own data too. Nothing asserts on timings; the numbers are for people.
"""
import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_backends  # noqa: E402
import gen_notes  # noqa: E402

FTS5_BATCH = 1000


def db_bytes(path):
    """Bytes of an SQLite database and its side files (-wal, -shm, -snapshots...)."""
    folder, name = os.path.split(path)
    return sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder) if f.startswith(name))


def fts5_import(paths, db_path):
    """Imports the notes of the .jsonl files into a fresh FTS5 file; returns (notes, seconds,
    bytes on disk)."""
    for f in os.listdir(os.path.dirname(db_path) or "."):
        if f.startswith(os.path.basename(db_path)):
            os.remove(os.path.join(os.path.dirname(db_path) or ".", f))
    t0 = time.monotonic()
    con = sqlite3.connect(db_path, isolation_level=None)
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("CREATE VIRTUAL TABLE notes USING fts5(title, content, detail=full, "
                "tokenize='porter unicode61')")
    n = 0
    for path in paths:
        with open(path, encoding="utf-8") as f:
            con.execute("BEGIN")
            for line in f:
                o = json.loads(line)
                if o.get("type") == "collection":
                    continue
                con.execute("INSERT INTO notes (title, content) VALUES (?, ?)",
                            (o.get("title") or "", o.get("content") or ""))
                n += 1
                if n % FTS5_BATCH == 0:
                    con.execute("COMMIT")
                    con.execute("BEGIN")
            con.execute("COMMIT")
    con.close()  # checkpoints the WAL into the file
    return n, time.monotonic() - t0, db_bytes(db_path)


SERVER_DB = "notesd_bench_import"


def fresh_database(srcdir, server, db_path):
    """The connection string of an empty database: the SQLite file db_path, or SERVER_DB on
    the server of the connection string `server`."""
    if not server:
        folder = os.path.dirname(db_path)
        for f in os.listdir(folder):
            if f.startswith(os.path.basename(db_path)):
                os.remove(os.path.join(folder, f))
        return "sqlite3://db=" + db_path
    sdb = bench_backends._serverdb(srcdir)
    sdb.drop_database(server, SERVER_DB)
    sdb.client_sql(server, "CREATE DATABASE %s" % SERVER_DB)
    return sdb.with_database(server, SERVER_DB)


def notesd_import(builddir, paths, db_path, srcdir=".", server=None):
    """`notesctl import` of each file as its own user into a fresh database (fresh_database);
    returns (notes, seconds of the imports, bytes on disk)."""
    ctl = os.path.join(builddir, "notesctl")
    conn = fresh_database(srcdir, server, db_path)

    def run(*args):
        subprocess.run([ctl, "--db", conn] + list(args), check=True, capture_output=True, text=True)

    run("migrate")
    n, seconds = 0, 0.0
    for i, path in enumerate(paths):
        user = "import%02d" % (i + 1)
        run("user", "add", user)
        t0 = time.monotonic()
        run("import", user, path)
        seconds += time.monotonic() - t0
        with open(path, encoding="utf-8") as f:
            n += sum(1 for line in f if '"type":"collection"' not in line)
    if not server:
        return n, seconds, db_bytes(db_path)
    size = bench_backends.database_bytes(srcdir, conn)
    bench_backends._serverdb(srcdir).drop_database(server, SERVER_DB)
    return n, seconds, size


def jsonl_files(a):
    folder = os.path.join(a.builddir, "bench-data", "import-jsonl-s%d-u%dx%d-g%d" % (
        a.seed, a.users, a.notes_per_user, gen_notes.GENERATOR_VERSION))
    paths = [os.path.join(folder, gen_notes.user_file_name(u)) for u in range(1, a.users + 1)]
    if not all(os.path.exists(p) for p in paths):
        os.makedirs(folder, exist_ok=True)
        gen_notes.generate_many([(a.seed, u, a.notes_per_user, folder) for u in range(1, a.users + 1)],
                                min(2, a.users))
    return paths


def table(rows):
    """Markdown lines for [(engine, notes, seconds, bytes)], medians over runs already taken."""
    fts = next(r for r in rows if r[0] == "FTS5")
    lines = ["| engine | notes | seconds | notes/s | ratio to FTS5 | bytes on disk | bytes per note | size / FTS5 |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for engine, n, s, b in rows:
        lines.append("| %s | %d | %.1f | %.0f | %.2f | %.0f MB | %.0f | %.2f |" % (
            engine, n, s, n / s, (n / s) / (fts[1] / fts[2]), b / 1e6, b / n, b / fts[3]))
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--srcdir", default=".")
    ap.add_argument("--builddir", default=".")
    ap.add_argument("--users", type=int, default=1)
    ap.add_argument("--notes-per-user", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="2 users x 20,000 notes (bench.py --quick's data)")
    ap.add_argument("--db", help="import into a fresh database on this MariaDB or PostgreSQL server")
    a = ap.parse_args(argv)
    if a.quick:
        a.users, a.notes_per_user = 2, 20000
    paths = jsonl_files(a)
    work = os.path.join(a.builddir, "bench-work", "import")
    os.makedirs(work, exist_ok=True)
    engine = "notesd (%s)" % bench_backends.backend_of(a.db) if a.db else "notesd"
    results = {engine: [], "FTS5": []}
    for _ in range(a.runs):  # interleaved, so both engines see the same machine state
        results[engine].append(notesd_import(a.builddir, paths, os.path.join(work, "notes.db"),
                                             a.srcdir, a.db))
        results["FTS5"].append(fts5_import(paths, os.path.join(work, "fts5.db")))
    rows = []
    for engine, runs in results.items():
        rows.append((engine, runs[0][0], statistics.median(r[1] for r in runs),
                     statistics.median(r[2] for r in runs)))
    print("Import of %d users x %d notes (seed %d), median of %d run(s): %s" % (
        a.users, a.notes_per_user, a.seed, a.runs,
        "; ".join("%s %s s" % (e, " / ".join("%.1f" % r[1] for r in rs)) for e, rs in results.items())))
    print()
    print("\n".join(table(rows)))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
