#!/usr/bin/env python3
"""Which pages of an SQLite file one API write changes, by table and index.

    python3 tools/write_pages.py --db FILE [--kind create|update|delete] [--writes 90]

FILE (a notesd SQLite file with at least one user, e.g. bench-data/KEY/notes.db) is copied to a
temporary file first. Through the e2e harness (real nginx, one worker, the merger off) the first
user's token makes 5 unrecorded writes, then --writes writes while `strace` (Debian package
strace) records the worker's pwrites; each WAL frame header names the page it holds, which
`dbstat` maps to its table or index ("?": free-list and pointer-map pages). Printed: frames per
write transaction, and per table. update and delete take the user's newest notes. doc/benchmarks.md
keeps the numbers; nothing is asserted.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FRAME_HEADER = re.compile(r'pwrite64\(\d+<[^>]*>, "((?:\\x[0-9a-f]{2}){24})", 24,')


def frames(trace):
    """(page number, commit frame?) of each WAL frame header in the trace."""
    for line in open(trace):
        m = FRAME_HEADER.search(line)
        if m:
            header = bytes(int(h, 16) for h in m.group(1).split("\\x")[1:])
            yield int.from_bytes(header[:4], "big"), int.from_bytes(header[4:8], "big") != 0


def page_names(db):
    out = subprocess.run(["sqlite3", db, "SELECT pageno, name FROM dbstat"], check=True,
                         capture_output=True, text=True).stdout
    return {int(p): n for p, n in (line.split("|", 1) for line in out.splitlines())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--srcdir", default=os.path.dirname(HERE))
    ap.add_argument("--builddir", default=os.getcwd())
    ap.add_argument("--db", required=True)
    ap.add_argument("--kind", choices=("create", "update", "delete"), default="create")
    ap.add_argument("--writes", type=int, default=90)
    a = ap.parse_args()
    if not shutil.which("strace"):
        sys.exit("write_pages: strace not found (apt-get install strace)")
    os.environ["NOTESD_BUILDDIR"], os.environ["NOTESD_SRCDIR"] = a.builddir, a.srcdir
    sys.path.insert(0, os.path.join(a.srcdir, "t", "e2e"))
    from harness import Stack
    work = tempfile.mkdtemp(prefix="write-pages-")
    db, trace = os.path.join(work, "notes.db"), os.path.join(work, "trace.txt")
    shutil.copyfile(a.db, db)
    user = subprocess.run(["sqlite3", db, "SELECT name FROM users ORDER BY id LIMIT 1"],
                          check=True, capture_output=True, text=True).stdout.strip()
    body = "\n\n".join(["# Write pages"] + [" ".join("word%d alpha beta gamma delta" % j
                                                     for j in range(i, i + 12)) for i in range(5)])
    try:
        with Stack(db="sqlite3://db=" + db, config={"workers": 1}) as stack:
            token = stack.create_token(user)
            notes, page = [], None
            while a.kind != "create" and len(notes) < a.writes + 5:
                r = stack.request("GET", "/v2/notes", token=token,
                                  query=dict({"limit": "50"}, **({"page": page} if page else {})))
                for n in r.json()["results"]:  # a list item has no version; a read by id has
                    notes.append((n["id"], stack.request("GET", "/v2/notes/" + n["id"], token=token).json()["version"]))
                page = r.json().get("next_page")
                if not page:
                    break

            def write(i):
                if a.kind == "create":
                    return stack.request("POST", "/v2/notes", body={"content": body}, token=token)
                note_id, version = notes[i]
                if a.kind == "update":
                    return stack.request("PATCH", "/v2/notes/" + note_id, token=token,
                                         body={"content": body + "\n\n- [ ] task %d" % i, "version": version})
                return stack.request("DELETE", "/v2/notes/" + note_id, token=token)

            for i in range(5):
                write(i)
            tracer = subprocess.Popen(["strace", "-f", "-p", str(stack.worker_pids()[0]), "-e",
                                       "trace=pwrite64", "-y", "-xx", "-o", trace],
                                      stderr=subprocess.DEVNULL)
            time.sleep(1)
            for i in range(5, 5 + a.writes):
                r = write(i)
                if r.status != 200:
                    sys.exit("%s %d: %d %s" % (a.kind, i, r.status, r.text))
            time.sleep(0.5)
            tracer.terminate()
            tracer.wait()
        names = page_names(db)
        pages, commits = collections.Counter(), 0
        for page_no, commit in frames(trace):
            pages[names.get(page_no, "?")] += 1
            commits += commit
        commits = max(commits, 1)
        print("%s: %d write transactions, %.1f pages each" % (a.kind, commits, sum(pages.values()) / commits))
        print(", ".join("%s %.2f" % (n, c / commits) for n, c in pages.most_common()))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
