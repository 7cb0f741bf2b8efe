#!/usr/bin/env python3
"""How long the background merger's fold publishes hold a user's lock, per backend.

    NOTESD_E2E_DB=sqlite|mysql|postgresql python3 tools/bench_folds.py [--builddir B] [--notes N]

Through the e2e harness (real nginx, workers and database; for a server backend the
NOTESD_TEST_MYSQL / NOTESD_TEST_PGSQL server, as the e2e tests use): N notes of the shared
corpus are created through the API with the merger off, then a merger folds them; the same for
N updates (each note gets another note's text) and N deletes. Printed per phase: the fold steps,
and the median and longest fold_publish write transaction (the user's lock held). No timing is
asserted; doc/benchmarks.md keeps the numbers.
"""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def settle(stack, since, quiet=2.0):
    last, at = -1, time.monotonic()
    while True:
        time.sleep(0.3)
        n = len(stack.merge_steps(since))
        if n != last:
            last, at = n, time.monotonic()
        elif n > 0 and time.monotonic() - at > quiet:
            return


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--srcdir", default=os.path.dirname(HERE))
    ap.add_argument("--builddir", default=os.getcwd())
    ap.add_argument("--notes", type=int, default=600)
    a = ap.parse_args()
    os.environ["NOTESD_BUILDDIR"], os.environ["NOTESD_SRCDIR"] = a.builddir, a.srcdir
    sys.path.insert(0, os.path.join(a.srcdir, "t", "e2e"))
    from harness import Stack
    from test_import import TIL, md_files
    files = sorted(md_files(TIL))[:a.notes]
    texts = []
    for f in files:
        with open(f, encoding="utf-8", errors="replace") as fh:
            texts.append(fh.read())
    with Stack(config={"merge_interval_ms": 0}) as stack:
        user, token = stack.create_user("folds")
        ids = []
        for phase in ("create", "update", "delete"):
            stack.write_config(merge_interval_ms=0)
            stack.restart_notesd()
            for k, text in enumerate(texts):
                if phase == "create":
                    r = stack.request("POST", "/v2/notes", body={"content": text}, token=token)
                    ids.append(r.json()["id"] if r.status == 200 else None)
                elif phase == "update":
                    r = stack.request("PATCH", "/v2/notes/" + ids[k], token=token,
                                      body={"content": texts[(k + 7) % len(texts)], "version": 1})
                else:
                    r = stack.request("DELETE", "/v2/notes/" + ids[k], token=token)
                if r.status != 200:
                    sys.exit("%s %d: %d %s" % (phase, k, r.status, r.text))
            since = len(stack.logs())
            stack.write_config(merge_interval_ms=50, merge_fold_delay_ms=0)
            stack.restart_notesd()
            settle(stack, since)
            folds = [s for s in stack.merge_steps(since) if s[1] > 0]
            pubs = [s[5] / 1000.0 for s in folds if s[6] == "fold_publish"]
            print("%s %s: %d notes in %d fold steps; fold_publish the longest transaction of %d: "
                  "median %.1f ms, max %.1f ms; longest of any step %.1f ms"
                  % (stack.backend, phase, sum(s[1] for s in folds), len(folds), len(pubs),
                     statistics.median(pubs) if pubs else 0, max(pubs or [0]),
                     max([s[5] / 1000.0 for s in folds] or [0])))
        out = stack.notesctl("check", user, check=False)
        if out.returncode != 0:
            sys.exit("notesctl check found differences:\n" + out.stdout + out.stderr)


if __name__ == "__main__":
    main()
