#!/usr/bin/env python3
"""Relevance of POST /v2/notes/search on Cranfield 1400, through the real stack (`make eval`).

    python3 tools/eval_cranfield.py --srcdir SRC --builddir BUILD [--db CONN] [--json FILE]

1. Reads ../shared/eval/cranfield (--data DIR; default $NOTESD_SHARED/eval/cranfield): 1,400
   documents (title = .T, body = .W), 225 queries, the relevance judgments.
2. Writes the documents as one .jsonl file of notes with a stable uuid per document id and
   updated_at = a fixed day + doc id seconds (the offline evaluator's order for ties), starts a
   Stack (t/e2e/harness.py: notesd + nginx) on a fresh SQLite database or on --db CONN (any
   backend; a new user is created there, other users' notes never affect its ranking), and
   imports the file with `notesctl import`.
3. Runs every query through the HTTP endpoint: limit=50, then offset=50 with the snapshot_id,
   which is the whole 100-result window; maps result ids back to document ids.
4. Prints MAP (over the window; each query's AP divided by all its relevant documents), P@10,
   nDCG@10 and R@100 with binary relevance, and the time taken.

Query numbering: cranqrel numbers the queries 1..225 by position in cran.qry, whose own .I
numbers have gaps (001, 002, 004, ...): qrels query k is the k-th query of the file. Grades 1..4
count as relevant, anything else (-1) as not.

The module is importable: t/e2e/test_relevance.py uses load_collection(), import_into() and
run_queries() to check the thresholds and the parity between backends.
"""
import argparse
import http.client
import json
import math
import os
import re
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WINDOW = 100      # a search snapshot holds at most 100 results
PAGE = 50         # the endpoint's largest limit
BASE_EPOCH = 1262304000  # 2010-01-01T00:00:00Z; document k is updated k seconds later


def read_smart(path):
    """Records of a SMART-format file: [{"I": id, "T": text, "W": text, ...}], in file order."""
    recs, field = [], None
    with open(path, encoding="utf-8", errors="replace", newline="") as f:
        for line in f.read().replace("\r", "").split("\n"):
            m = re.match(r"^\.([A-Z])(?: (.*))?$", line)
            if m:
                field = m.group(1)
                if field == "I":
                    recs.append({"I": (m.group(2) or "").strip()})
                elif recs:
                    recs[-1].setdefault(field, [])
                continue
            if recs and field and field != "I":
                recs[-1].setdefault(field, []).append(line)
    for r in recs:
        for k, v in list(r.items()):
            if k != "I":
                r[k] = "\n".join(v).strip()
    return recs


def load_collection(data_dir):
    """(docs, queries, qrels): docs [(doc id, title, body)], queries [text] in file order
    (position k-1 is qrels query k), qrels {query number: set of relevant doc ids}."""
    docs = [(int(r["I"]), r.get("T", ""), r.get("W", "")) for r in read_smart(os.path.join(data_dir, "cran.all.1400"))]
    queries = [r.get("W", "") for r in read_smart(os.path.join(data_dir, "cran.qry"))]
    qrels = {}
    with open(os.path.join(data_dir, "cranqrel"), encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 3 and 1 <= int(parts[2]) <= 4:
                qrels.setdefault(int(parts[0]), set()).add(int(parts[1]))
    if len(docs) != 1400 or len(queries) != 225 or not qrels:
        raise ValueError("unexpected Cranfield data in %s: %d docs, %d queries, %d judged"
                         % (data_dir, len(docs), len(queries), len(qrels)))
    return docs, queries, qrels


def doc_uuid(doc_id):
    return "cf000000-0000-4000-8000-%012d" % doc_id


def uuid_doc(note_id):
    m = re.match(r"^cf000000-0000-4000-8000-(\d{12})$", note_id)
    if not m:
        raise ValueError("result id %r is not a Cranfield note" % note_id)
    return int(m.group(1))


def rfc3339(epoch_s):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch_s))


def write_jsonl(docs, path):
    with open(path, "w", encoding="utf-8") as f:
        for doc_id, title, body in docs:
            stamp = rfc3339(BASE_EPOCH + doc_id)
            f.write(json.dumps({"id": doc_uuid(doc_id), "title": title, "content": body,
                                "created_at": stamp, "updated_at": stamp, "collection_ids": []},
                               ensure_ascii=False) + "\n")


def import_into(stack, docs, user, workdir):
    """Creates `user` on the stack's database, imports the documents; returns (token, seconds)."""
    path = os.path.join(workdir, "cranfield-%s.jsonl" % user)
    write_jsonl(docs, path)
    _, token = stack.create_user(user)
    t0 = time.monotonic()
    stack.notesctl("import", user, path, timeout=600)
    return token, time.monotonic() - t0


class Client:
    """POST /v2/notes/search on one kept-alive connection to the stack's nginx. check: called
    with (method, target, status, header pairs, body) for every response (the e2e suite checks
    them against the OpenAPI document)."""

    def __init__(self, port, token, check=None):
        self.port, self.token, self.conn, self.check = port, token, None, check

    def search(self, text, query):
        target = "/v2/notes/search?" + "&".join("%s=%s" % kv for kv in query.items())
        body = json.dumps({"query": text}).encode()
        headers = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                self.conn.request("POST", target, body=body, headers=headers)
                resp = self.conn.getresponse()
                data = resp.read()
                break
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
        if self.check:
            self.check("POST", target, resp.status, resp.getheaders(), data)
        if resp.status != 200:
            raise RuntimeError("search %r (%s) answered %d: %s" % (text[:60], target, resp.status, data[:300]))
        return json.loads(data)

    def window(self, text):
        """Document ids of the whole result window (first page, then the snapshot's second)."""
        first = self.search(text, {"limit": PAGE})
        ids = [r["id"] for r in first["results"]]
        if first["has_next_page"]:
            second = self.search(text, {"limit": PAGE, "offset": PAGE, "snapshot_id": first["snapshot_id"]})
            ids += [r["id"] for r in second["results"]]
        if len(ids) != len(set(ids)) or len(ids) != min(first["total"], WINDOW):
            raise RuntimeError("query %r: inconsistent window (%d ids, total %d)" % (text[:60], len(ids), first["total"]))
        return [uuid_doc(i) for i in ids]

    def close(self):
        if self.conn:
            self.conn.close()


def run_queries(stack, token, queries, check=None):
    """The result window (doc ids, best first) of every query, in query order; and seconds.
    check: see Client."""
    client = Client(stack.port, token, check)
    t0 = time.monotonic()
    try:
        results = [client.window(q) for q in queries]
    finally:
        client.close()
    return results, time.monotonic() - t0


def evaluate(results, qrels):
    """Mean AP (over the window), P@10, nDCG@10, R@100 with binary relevance, and per query."""
    per = []
    for k, ids in enumerate(results, start=1):
        rel = qrels.get(k, set())
        hits, ap, dcg = 0, 0.0, 0.0
        for i, d in enumerate(ids[:WINDOW]):
            if d in rel:
                hits += 1
                ap += hits / (i + 1)
                if i < 10:
                    dcg += 1 / math.log2(i + 2)
        idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(rel))))
        per.append({"query": k, "ap": ap / len(rel) if rel else 0.0,
                    "p10": sum(1 for d in ids[:10] if d in rel) / 10,
                    "ndcg10": dcg / idcg if idcg else 0.0,
                    "r100": hits / len(rel) if rel else 0.0})
    n = len(per) or 1
    summary = {m: sum(p[m] for p in per) / n for m in ("ap", "p10", "ndcg10", "r100")}
    return {"map": summary["ap"], "p10": summary["p10"], "ndcg10": summary["ndcg10"],
            "r100": summary["r100"], "queries": len(per)}, per


def default_data_dir(srcdir):
    shared = os.environ.get("NOTESD_SHARED") or os.path.join(srcdir, "..", "shared")
    return os.path.abspath(os.path.join(shared, "eval", "cranfield"))


def parse_args(argv):
    ap = argparse.ArgumentParser(description="Cranfield relevance through the search endpoint")
    ap.add_argument("--srcdir", default=os.path.dirname(HERE))
    ap.add_argument("--builddir", default=os.getcwd())
    ap.add_argument("--data", help="the Cranfield folder (default $NOTESD_SHARED/eval/cranfield)")
    ap.add_argument("--db", help="SOCI connection string (default: a fresh SQLite file)")
    ap.add_argument("--user", help="user to create and import into (default cranfield-<random>)")
    ap.add_argument("--json", help="write the numbers and every query's top-10 doc ids here")
    ap.add_argument("--per-query", action="store_true", help="print AP, P@10, nDCG@10 per query")
    a = ap.parse_args(argv)
    a.srcdir, a.builddir = os.path.abspath(a.srcdir), os.path.abspath(a.builddir)
    a.data = os.path.abspath(a.data or default_data_dir(a.srcdir))
    return a


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    os.environ["NOTESD_BUILDDIR"] = a.builddir
    os.environ["NOTESD_SRCDIR"] = a.srcdir
    sys.path.insert(0, os.path.join(a.srcdir, "t", "e2e"))
    from harness import Stack
    docs, queries, qrels = load_collection(a.data)
    user = a.user or "cranfield-" + os.urandom(4).hex()
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="notesd-eval-") as work, Stack(db=a.db, start_timeout=60) as stack:
        token, import_s = import_into(stack, docs, user, work)
        results, query_s = run_queries(stack, token, queries)
    total_s = time.monotonic() - t0
    m, per = evaluate(results, qrels)
    if a.per_query:
        for p in per:
            print("q%d ap=%.4f p10=%.2f ndcg10=%.4f" % (p["query"], p["ap"], p["p10"], p["ndcg10"]))
    backend = (a.db or "sqlite3://").split("://", 1)[0]
    print("cranfield: %d docs, %d queries (%d judged), backend %s, user %s"
          % (len(docs), len(queries), len(qrels), backend, user))
    print("MAP@100 %.4f  P@10 %.4f  nDCG@10 %.4f  R@100 %.4f" % (m["map"], m["p10"], m["ndcg10"], m["r100"]))
    print("import %.1f s, queries %.1f s (%.1f ms per query, 2 requests each), total %.1f s"
          % (import_s, query_s, 1000 * query_s / len(queries), total_s))
    if a.json:
        out = dict(m, backend=backend, import_seconds=round(import_s, 2), query_seconds=round(query_s, 2),
                   total_seconds=round(total_s, 2),
                   per_query=[dict(p, top10=r[:10]) for p, r in zip(per, results)])
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return m


if __name__ == "__main__":
    main()
