#!/usr/bin/env python3
"""Proof of "no behaviour change": two builds answer the benchmark's requests identically.

    python3 tools/compare_windows.py --base BUILD_A --head BUILD_B [--quick] [bench.py options]

BUILD_A and BUILD_B are build directories holding notesd and notesctl (two git revisions built
in separate worktrees, e.g. `git worktree add ../base e36a3d0 && cd ../base && autoreconf -fi
&& ./configure && make notesd notesctl`). Both run, one after the other, through the real nginx
+ worker pool (t/e2e/harness.py of this source tree) against the same database: bench.py's
generated data (cached under BUILD_A/bench-data/ as `make bench` caches it; --quick is the
`make bench BENCH_ARGS=--quick` size, 2 x 20,000 notes; --cache-dir to share one elsewhere).

Compared, as JSON, for the large user:
  - each of the 1,200 queries of search_mixed: the whole 100-result window, i.e. the first page
    (limit 50, a new search) and the second (offset 50 of that snapshot), with content and
    snippets (include_note_content), plus `total` and `has_next_page`;
  - list pages: every page of the walk of /v2/notes in both orders (limit 100, with content),
    the first pages of every filter set of bench.py, and every collections page.
Ignored: request_id and snapshot_id (random per request). Cursors (next_page) are compared:
both builds sign with the same secret.

Prints the first differences and exits 1 when anything differs, 0 when all is identical.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402

SEARCH_PAGE = 50  # the API's largest search page: two pages make the 100-result window


def strip(page):
    return {k: v for k, v in page.items() if k not in ("request_id", "snapshot_id")}


def search_window(ctx, query):
    body = {"query": query, "config": {"include_note_content": True}}
    first = ctx.search(ctx.big, {"limit": SEARCH_PAGE}, body)
    pages = [strip(first)]
    if first.get("total", 0) > SEARCH_PAGE:
        second = ctx.search(ctx.big, {"limit": SEARCH_PAGE, "offset": SEARCH_PAGE,
                                      "snapshot_id": first["snapshot_id"]}, body)
        pages.append(strip(second))
    return pages


def list_walk(ctx, path, query, limit=100, max_pages=None):
    pages, cursor = [], None
    while max_pages is None or len(pages) < max_pages:
        q = dict(query, limit=limit)
        if cursor:
            q["page"] = cursor
        page = ctx.get(ctx.big, path, q)
        pages.append(strip(page))
        cursor = page.get("next_page")
        if not cursor:
            break
    return pages


def start_stack(a, build, db):
    """A stack of the build in `build` whose cursors are signed with a fixed secret, so that
    both builds' cursors compare."""
    os.environ["NOTESD_BUILDDIR"] = build
    os.environ["NOTESD_SRCDIR"] = a.srcdir
    sys.path.insert(0, os.path.join(a.srcdir, "t", "e2e"))
    import harness
    harness.BUILDDIR = build  # read once at import: the second build needs it set again
    stack = harness.Stack(config={"workers": a.workers, "snapshot_ttl_s": 6 * 3600}, db=db,
                          start_timeout=60)
    with open(os.path.join(stack.data_dir, "secret"), "w") as f:
        f.write("compare-windows-" + "0123456789abcdef" * 3 + "\n")
    return stack.start()


def collect(a, build, db, info, queries):
    """{label: answer} of every compared request, served by the build in `build`."""
    stack = start_stack(a, build, db)
    try:
        spec = info["spec"]
        big_users = ["bench%02d" % u for u in range(1, spec["big_users"] + 1)]
        tokens = bench.create_tokens(stack, big_users)
        ctx = bench.Context(stack, tokens, big_users, a.walk_pages, spec["seed"])
        if queries is None:
            queries = ctx.search_queries("mixed")
        out = {}
        for i, q in enumerate(queries):
            out["search %04d %r" % (i, q)] = search_window(ctx, q)
        bench.log("%s: %d search windows" % (build, len(queries)))
        for order in ("updated_at", "created_at"):
            out["walk notes " + order] = list_walk(ctx, "/v2/notes", {"order_by": order,
                                                                     "include_note_content": "true"})
        for label, query in ctx.filter_sets().items():
            out["filter " + label] = list_walk(ctx, "/v2/notes", query, max_pages=a.filter_pages)
        out["collections"] = list_walk(ctx, "/v2/collections", {}, limit=5)
        bench.log("%s: %d lists" % (build, len(out) - len(queries)))
        if ctx.conn:
            ctx.conn.close()
        return out, queries
    finally:
        stack.stop()


def first_difference(x, y, where=""):
    if type(x) is not type(y):
        return "%s: %r != %r" % (where, x, y)
    if isinstance(x, dict):
        for k in sorted(set(x) | set(y)):
            if k not in x or k not in y:
                return "%s.%s: present in one only" % (where, k)
            d = first_difference(x[k], y[k], "%s.%s" % (where, k))
            if d:
                return d
    elif isinstance(x, list):
        if len(x) != len(y):
            return "%s: %d != %d items" % (where, len(x), len(y))
        for i, (p, q) in enumerate(zip(x, y)):
            d = first_difference(p, q, "%s[%d]" % (where, i))
            if d:
                return d
    elif x != y:
        return "%s: %r != %r" % (where, str(x)[:120], str(y)[:120])
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="build directory of the reference revision")
    ap.add_argument("--head", required=True, help="build directory of the revision under test")
    ap.add_argument("--filter-pages", type=int, default=5, help="pages of each filtered walk")
    ap.add_argument("--save", help="write both answer sets here (JSON) for inspection")
    a, rest = ap.parse_known_args(argv)
    base, head = os.path.abspath(a.base), os.path.abspath(a.head)
    b = bench.parse_args(["--builddir", base] + rest)
    b.filter_pages, b.workers = a.filter_pages, 2
    db, info = bench.prepare_data(b)  # imported with the base build's notesctl, once
    try:
        want, queries = collect(b, base, db, info, None)
        got, _ = collect(b, head, db, info, queries)
    finally:
        if b.server:
            b.server.stop()
    if a.save:
        with open(a.save, "w") as f:
            json.dump({"base": want, "head": got}, f)
    differing = []
    for label in want:
        d = first_difference(want[label], got.get(label), label)
        if d:
            differing.append(d)
    searches = sum(1 for k in want if k.startswith("search "))
    results = sum(len(p.get("results", [])) for v in want.values() for p in v)
    print("compared %d search windows and %d lists (%d pages, %d results): %d differ"
          % (searches, len(want) - searches, sum(len(v) for v in want.values()), results, len(differing)))
    for d in differing[:20]:
        print("DIFF " + d)
    return 1 if differing or not searches else 0


if __name__ == "__main__":
    sys.exit(main())
