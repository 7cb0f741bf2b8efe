#!/usr/bin/env python3
"""Checks the shape of src/ against the rules of README.md ("Layout"):

    python3 t/check_layout.py [--srcdir S] [--rule layers|libraries|file_lines|function_lines]

1. layers: a file includes files of its own layer or of a lower rank only (LAYERS); store and
   search share a rank but never include each other (search reaches storage only through the
   index interface of src/index/). Every quoted include is rooted at src/ ("index/text.hpp").
2. libraries: the transport library only in server/, SOCI and SQLite only in store/ and
   index/, cmark only in ingest/ (LIBRARIES).
3. file_lines: no file in src/ over MAX_FILE_LINES lines.
4. function_lines: no function body over MAX_FUNCTION_LINES lines (from the line of its
   opening brace to the line of its closing one).

Each (rule, file) pair is one test: `make check` counts them in its summary (t/run_tests.py,
part "layout"). Prints one line per failure and exits 1 when any failed.
"""
import argparse
import os
import re
import sys

# Rank of each folder of src/: a file may include files of its own folder or of a lower rank.
LAYERS = {"base": 0, "index": 1, "store": 2, "search": 2, "ingest": 3, "api": 4, "server": 5,
          "tools": 6}
# Same rank, still not allowed to include each other (search sees storage through index/).
SIBLINGS_APART = {("store", "search"), ("search", "store")}
# Quoted includes that are generated at build time rather than found in src/.
GENERATED = {"config.h"}
# Sources written by the build (an in-tree build puts them into src/): not checked.
GENERATED_SOURCES = {os.path.join("store", "migrations_sql.cpp")}
# (regular expression of an <include>, the layers that may use it)
LIBRARIES = [
    (re.compile(r"^fcgi"), {"server"}),
    (re.compile(r"^soci/|^sqlite3\.h$"), {"store", "index"}),
    (re.compile(r"^cmark"), {"ingest"}),
]
MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
SOURCE = (".cpp", ".hpp", ".h", ".cc")
RULES = ("layers", "libraries", "file_lines", "function_lines")

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)


def source_files(src):
    out = []
    for root, _, files in os.walk(src):
        for f in files:
            rel = os.path.relpath(os.path.join(root, f), src)
            if f.endswith(SOURCE) and rel not in GENERATED_SOURCES:
                out.append(rel)
    return sorted(out)


def layer_of(rel):
    return rel.split(os.sep)[0] if os.sep in rel else None


def check_layers(src, rel, text):
    problems = []
    mine = layer_of(rel)
    if mine not in LAYERS:
        return ["%s is not in a layer folder (%s)" % (rel, ", ".join(LAYERS))]
    for m in INCLUDE.finditer(text):
        if m.group(1) != '"':
            continue
        target = m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        if target in GENERATED:
            continue
        theirs = target.split("/")[0]
        if theirs not in LAYERS or not os.path.isfile(os.path.join(src, target)):
            problems.append('line %d: "%s" is not a file of src/<layer>/' % (line, target))
        elif LAYERS[theirs] > LAYERS[mine]:
            problems.append('line %d: "%s" runs up from %s (rank %d) to %s (rank %d)'
                            % (line, target, mine, LAYERS[mine], theirs, LAYERS[theirs]))
        elif (mine, theirs) in SIBLINGS_APART:
            problems.append('line %d: "%s": %s must not include %s' % (line, target, mine, theirs))
    return problems


def check_libraries(src, rel, text):
    problems = []
    mine = layer_of(rel)
    for m in INCLUDE.finditer(text):
        if m.group(1) != "<":
            continue
        for pattern, allowed in LIBRARIES:
            if pattern.search(m.group(2)) and mine not in allowed:
                line = text.count("\n", 0, m.start()) + 1
                problems.append("line %d: <%s> belongs in %s only"
                                % (line, m.group(2), ", ".join(sorted(allowed))))
    return problems


def check_file_lines(src, rel, text):
    n = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    return ["%d lines (at most %d)" % (n, MAX_FILE_LINES)] if n > MAX_FILE_LINES else []


def blank_out(text):
    """The text with comments, string and character literals replaced by blanks (newlines
    kept), so that braces and parentheses inside them do not count."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            delim = ")" + text[i + 2:k] + '"'
            j = text.find(delim, k)
            j = n if j < 0 else j + len(delim)
            blank(i, j)
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator: 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            blank(i, min(n, j + 1))
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):  # a preprocessor line
            j = i
            while True:
                j = text.find("\n", j)
                if j < 0 or text[j - 1] != "\\":
                    break
                j += 1
            j = n if j < 0 else j
            blank(i, j)
            i = j
        else:
            i += 1
    return "".join(out)


CONTAINER = re.compile(r"\b(namespace|class|struct|union|enum)\b")
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|try)\b")


def functions(text):
    """(name, first line, lines) of every function body outside another function's body."""
    code = blank_out(text)
    out = []
    i, n = 0, len(code)
    head_start = 0  # where the declaration in front of the next brace starts

    def matching(k):
        depth = 0
        for j in range(k, n):
            if code[j] == "{":
                depth += 1
            elif code[j] == "}":
                depth -= 1
                if depth == 0:
                    return j
        return n - 1

    while i < n:
        c = code[i]
        if c in ";}":
            head_start = i + 1
        elif c == "{":
            head = code[head_start:i]
            if "(" in head and not CONTROL.match(head) and not re.search(r"\b(class|struct|union|enum|namespace)\s+\w*[^()]*$", head):
                end = matching(i)
                first = code.count("\n", 0, i) + 1
                last = code.count("\n", 0, end) + 1
                name = re.findall(r"([~\w:]+(?:operator\s*\S+)?)\s*\(", head)
                out.append((name[0] if name else "?", first, last - first + 1))
                i = end
                head_start = end + 1
            elif CONTAINER.search(head) or head.strip() == "" or "extern" in head:
                head_start = i + 1  # descend: a namespace, class or bare block
            else:  # an initialiser such as `= {...}`
                i = matching(i)
            # fall through to the next character
        i += 1
    return out


def check_function_lines(src, rel, text):
    return ["%s (line %d) has %d lines (at most %d)" % (name, first, lines, MAX_FUNCTION_LINES)
            for name, first, lines in functions(text) if lines > MAX_FUNCTION_LINES]


CHECKS = {"layers": check_layers, "libraries": check_libraries, "file_lines": check_file_lines,
          "function_lines": check_function_lines}


def check(srcdir, rules=RULES):
    """[(test name, [problems])] for every rule and every file of srcdir/src."""
    src = os.path.join(srcdir, "src")
    results = []
    for rel in source_files(src):
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            text = f.read()
        for rule in rules:
            results.append(("%s %s" % (rule, os.path.join("src", rel)), CHECKS[rule](src, rel, text)))
    return results


SELF_TEST = {  # file -> (text, the rules it must fail)
    "base/low.hpp": ('#include "api/high.hpp"\n', {"layers"}),
    "api/high.hpp": ('#include "base/low.hpp"\n#include "search/s.hpp"\n', set()),
    "search/s.hpp": ('#include "store/t.hpp"\n#include "index/i.hpp"\n', {"layers"}),
    "store/t.hpp": ('#include "search/s.hpp"\n#include <fcgiapp.h>\n', {"layers", "libraries"}),
    "index/i.hpp": ('#include "nowhere.hpp"\n', {"layers"}),
    "ingest/long.cpp": ("int f() {\n" + "    g();\n" * MAX_FUNCTION_LINES + "}\n",
                        {"function_lines"}),
    "tools/big.cpp": ("struct A {\n    void f() { if (x) { y(); } }\n};\n" * (MAX_FILE_LINES // 3 + 1),
                      {"file_lines"}),
}


def self_test():
    """[(test name, [problems])]: the checks run on a small tree of planted violations (an
    upward include, store and search including each other, a long function...) must find
    exactly those."""
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        for rel, (text, _) in SELF_TEST.items():
            os.makedirs(os.path.join(tmp, "src", os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(tmp, "src", rel), "w") as f:
                f.write(text)
        found = {name: bool(p) for name, p in check(tmp)}
    out = []
    for rel, (_, must_fail) in sorted(SELF_TEST.items()):
        for rule in RULES:
            name = "%s %s" % (rule, os.path.join("src", rel))
            expected = rule in must_fail
            ok = found.get(name) == expected
            out.append(("self-test " + name, [] if ok else ["expected %s, the check said %s" % (
                "a failure" if expected else "no failure", "failure" if found.get(name) else "pass")]))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--srcdir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--rule", action="append", choices=RULES, help="only these rules (repeatable)")
    a = ap.parse_args(argv)
    results = self_test() + check(a.srcdir, a.rule or RULES)
    failed = [(name, p) for name, p in results if p]
    for name, problems in failed:
        for p in problems:
            print("FAIL %s: %s" % (name, p))
    print("%d passed, %d failed" % (len(results) - len(failed), len(failed)))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
