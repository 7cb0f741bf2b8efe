"""Checks HTTP responses against the API's OpenAPI document (doc/openapi.yaml, built as
doc/openapi.json), so that every response the end-to-end suite receives is a documented one.

harness.Stack.request and raw_request call check_response for every response (a stack or a
request may opt out with a reason: unvalidated="..."). A response that does not match raises
Mismatch in the test that received it, and is also recorded in MISMATCHES: t/run_tests.py fails
a test during which a mismatch was recorded even when the test caught the exception (a load
thread, a broad except), and the module when one happened outside any test.

What "matches" means:
- The operation is found by method and path template (concrete paths before templated ones,
  as OpenAPI says; HEAD is looked up as GET and has no body).
- An operation's response must be documented for that status (or by a `default`); its required
  headers must be there and their values fit their schemas; the Content-Type must be one the
  response documents, and the body must validate against that media type's schema (JSON Schema
  2020-12, with Debian's python3-jsonschema). A documented response without content must come
  without a body.
- A known path with a method it does not have is an error with the document's
  x-undocumented-method-response (405 with Allow) or, for what nginx answers before routing (413,
  414, 400...), x-unknown-path-response; an unknown path must be an error with
  x-unknown-path-response (the generic error envelope). A success there is a mismatch.

Example:
    doc = openapi_check.document()
    problems = doc.problems("GET", "/v2/notes?limit=5", 200, headers, body_bytes)
"""
import json
import os
import re
import threading

try:
    import jsonschema
except ImportError as e:  # pragma: no cover (an install problem, said plainly)
    raise ImportError("the response validation needs python3-jsonschema (Debian: apt-get install "
                      "python3-jsonschema), for the python3 running the tests") from e

HERE = os.path.dirname(os.path.abspath(__file__))
SRCDIR = os.path.abspath(os.environ.get("NOTESD_SRCDIR") or os.path.join(HERE, "..", ".."))
BUILDDIR = os.path.abspath(os.environ.get("NOTESD_BUILDDIR") or SRCDIR)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")

# Every mismatch this process found, in order (see t/run_tests.py), and how many responses
# were checked.
MISMATCHES = []
CHECKED = 0
_lock = threading.Lock()


class Mismatch(AssertionError):
    """A response the OpenAPI document does not describe."""


def built_document_path():
    """The JSON document the build made from doc/openapi.yaml (what nginx serves)."""
    return os.path.join(BUILDDIR, "doc", "openapi.json")


class Document:
    """An OpenAPI 3.1 document, ready to check responses against."""

    def __init__(self, doc):
        self.doc = doc
        self._validators = {}
        self._resolved = {}
        routes = []
        for template, item in doc.get("paths", {}).items():
            item = self.resolve(item)
            pattern = "^" + re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(template)) + "$"
            routes.append((template.count("{"), template, re.compile(pattern), item))
        # Concrete paths first: /v2/notes/search before /v2/notes/{note_id}.
        routes.sort(key=lambda r: (r[0], r[1]))
        self.routes = [(t, rx, item) for _, t, rx, item in routes]
        self.undocumented_method = self.resolve(doc["x-undocumented-method-response"])
        self.unknown_path = self.resolve(doc["x-unknown-path-response"])

    # ---- references -------------------------------------------------------------------------

    def pointer(self, ref):
        if not ref.startswith("#/"):
            raise ValueError("only local references are supported: " + ref)
        node = self.doc
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def resolve(self, node):
        """node with every $ref replaced by its target (siblings of a $ref kept beside it)."""
        if isinstance(node, list):
            return [self.resolve(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            ref = node["$ref"]
            if ref not in self._resolved:
                self._resolved[ref] = None  # a cycle would recurse forever: the document has none
                self._resolved[ref] = self.resolve(self.pointer(ref))
            target = self._resolved[ref]
            siblings = {k: self.resolve(v) for k, v in node.items() if k != "$ref"}
            if not siblings:
                return target
            if isinstance(target, dict) and "type" in target and not set(siblings) - {
                    "description", "summary", "examples", "example", "default"}:
                merged = dict(target)
                merged.update(siblings)
                return merged
            siblings["allOf"] = siblings.get("allOf", []) + [target]
            return siblings
        return {k: self.resolve(v) for k, v in node.items()}

    def validator(self, schema):
        key = id(schema)
        v = self._validators.get(key)
        if v is None:
            v = jsonschema.Draft202012Validator(schema)
            self._validators[key] = (v, schema)  # schema kept alive: its id stays unique
            return v
        return v[0]

    # ---- lookup -----------------------------------------------------------------------------

    def route(self, path):
        """(template, path item) of the path, or (None, None)."""
        for template, rx, item in self.routes:
            if rx.match(path):
                return template, item
        return None, None

    def expected(self, method, path, status):
        """(what, response object, problems) for a response to METHOD PATH with STATUS."""
        template, item = self.route(path)
        lookup = "get" if method.upper() == "HEAD" else method.lower()
        if item is None:
            what = "a path the document does not have"
            problems = [] if status >= 400 else ["status %d for %s" % (status, what)]
            return what, self.unknown_path, problems
        op = item.get(lookup) if lookup in METHODS else None
        if op is None:
            what = "%s %s (%s is not a method of that path)" % (method, template, method)
            problems = [] if status >= 400 else ["status %d for %s" % (status, what)]
            resp = self.undocumented_method if status == 405 else self.unknown_path
            return what, resp, problems
        what = "%s %s (%s)" % (method, template, op.get("operationId", "?"))
        responses = op.get("responses", {})
        resp = (responses.get(str(status)) or responses.get("%dXX" % (status // 100))
                or responses.get("default"))
        if resp is None:
            return what, None, ["status %d is not documented for %s (documented: %s)"
                                % (status, what, ", ".join(sorted(responses)))]
        return what, resp, []

    # ---- checks -----------------------------------------------------------------------------

    def problems(self, method, target, status, headers, body):
        """Every way the response differs from the document ([] when it matches).

        headers: an object with get_all(name) (harness.Headers); body: the bytes (decoded from
        gzip already)."""
        path = target.split("?", 1)[0].split("#", 1)[0]
        if status < 400 and not path.startswith("/v2/"):
            return []  # not the API (the operators' /notesd-status): outside this document
        what, resp, problems = self.expected(method, path, status)
        if resp is None:
            return problems
        for name, header in (resp.get("headers") or {}).items():
            values = headers.get_all(name)
            if not values:
                if header.get("required"):
                    problems.append("header %s is missing (required for %d of %s)"
                                    % (name, status, what))
                continue
            schema = header.get("schema")
            if schema is not None:
                for v in values:
                    problems += ["header %s: %s" % (name, p) for p in
                                 self.schema_problems(schema, header_value(schema, v))]
        content = resp.get("content") or {}
        no_body = method.upper() == "HEAD" or status == 304
        if not content or no_body:
            if body:
                problems.append("a body (%d bytes) where %s documents none"
                                % (len(body), what))
            return problems
        ctype = (headers.get_all("Content-Type") or [""])[0]
        media = ctype.split(";", 1)[0].strip().lower()
        if media not in content:
            problems.append("Content-Type %r is not documented for %d of %s (documented: %s)"
                            % (ctype, status, what, ", ".join(content)))
            return problems
        schema = content[media].get("schema")
        if schema is None:
            return problems
        try:
            value = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            problems.append("the body is not JSON (%s): %r" % (e, body[:200]))
            return problems
        problems += ["body: " + p for p in self.schema_problems(schema, value)]
        return problems

    def schema_problems(self, schema, value):
        out = []
        for e in sorted(self.validator(schema).iter_errors(value), key=lambda e: list(e.path)):
            where = "/".join(str(p) for p in e.absolute_path) or "(top)"
            out.append("%s: %s" % (where, best_message(e)))
            if len(out) == 8:
                out.append("...")
                break
        return out


def best_message(error):
    """The message of the deepest cause of a oneOf/anyOf/allOf failure."""
    while error.context:
        error = min(error.context, key=lambda e: (-len(e.absolute_path), e.message))
    return error.message[:300]


def header_value(schema, value):
    """A header value as the type its schema names (headers are strings on the wire)."""
    if schema.get("type") == "integer" and re.fullmatch(r"-?[0-9]+", value.strip()):
        return int(value)
    return value


_document = None


def document():
    """The built document (doc/openapi.json), loaded once."""
    global _document
    if _document is None:
        path = built_document_path()
        try:
            with open(path, encoding="utf-8") as f:
                _document = Document(json.load(f))
        except FileNotFoundError:
            raise Mismatch("%s is not built (run make: it builds it from doc/openapi.yaml)" % path)
    return _document


def check_response(method, target, status, headers, body):
    """Raises Mismatch (and records it in MISMATCHES) when the response is not documented."""
    global CHECKED
    problems = document().problems(method, target, status, headers, body)
    with _lock:
        CHECKED += 1
    if problems:
        msg = "%s %s -> %d does not match doc/openapi.yaml: %s" % (
            method, target[:200], status, "; ".join(problems))
        with _lock:
            MISMATCHES.append(msg)
        raise Mismatch(msg)


class RawHeaders:
    """get_all over (name, value) pairs, as harness.Headers."""

    def __init__(self, pairs):
        self.pairs = pairs

    def get_all(self, name):
        return [v for k, v in self.pairs if k.lower() == name.lower()]


def parse_raw_response(data):
    """(status, RawHeaders, body) of the first HTTP/1.x response in data (chunked bodies
    joined), or None when data holds no complete status line."""
    head, sep, rest = data.partition(b"\r\n\r\n")
    if not sep:
        return None
    lines = head.decode("latin-1").split("\r\n")
    m = re.match(r"HTTP/1\.[01] ([0-9]{3})", lines[0])
    if not m:
        return None
    pairs = []
    for line in lines[1:]:
        k, _, v = line.partition(":")
        pairs.append((k.strip(), v.strip()))
    headers = RawHeaders(pairs)
    if "chunked" in ",".join(headers.get_all("Transfer-Encoding")).lower():
        body = b""
        while rest:
            size_line, _, rest = rest.partition(b"\r\n")
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                break
            body += rest[:size]
            rest = rest[size + 2:]
    else:
        length = headers.get_all("Content-Length")
        body = rest[:int(length[0])] if length else rest
    if "gzip" in ",".join(headers.get_all("Content-Encoding")).lower() and body:
        import gzip
        body = gzip.decompress(body)
    return int(m.group(1)), headers, body


def check_raw(request, response):
    """check_response for raw bytes sent and received (harness.Stack.raw_request). A request
    whose request line does not parse is checked as one to an unknown path."""
    parsed = parse_raw_response(response)
    if parsed is None:
        return  # nothing answered (the test itself says whether that is right)
    status, headers, body = parsed
    first = request.split(b"\r\n", 1)[0].decode("latin-1")
    parts = first.split(" ")
    if len(parts) == 3 and parts[2].startswith("HTTP/") and parts[1].startswith("/"):
        method, target = parts[0], parts[1]
    else:
        method, target = "GET", "(no parseable request line)"
    check_response(method, target, status, headers, body)
