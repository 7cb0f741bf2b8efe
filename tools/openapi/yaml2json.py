#!/usr/bin/env python3
"""doc/openapi.yaml (the source) as JSON, for nginx to serve at /v2/openapi.json:

    python3 tools/openapi/yaml2json.py doc/openapi.yaml > doc/openapi.json

Fails (exit 1, nothing on stdout) when the YAML does not parse, is not an OpenAPI 3.1 document,
or holds a value JSON has no type for (an unquoted date becomes a timestamp in YAML 1.1).
"""
import json
import sys

try:
    import yaml
except ImportError:
    sys.exit("yaml2json.py: the YAML module is missing (Debian: apt-get install python3-yaml)")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: yaml2json.py OPENAPI.yaml")
    with open(sys.argv[1], encoding="utf-8") as f:
        try:
            doc = yaml.safe_load(f)
        except yaml.YAMLError as e:
            sys.exit("yaml2json.py: %s: %s" % (sys.argv[1], e))
    if not isinstance(doc, dict) or not str(doc.get("openapi", "")).startswith("3.1."):
        sys.exit("yaml2json.py: %s is not an OpenAPI 3.1 document" % sys.argv[1])
    try:
        text = json.dumps(doc, indent=1, ensure_ascii=True, allow_nan=False)
    except (TypeError, ValueError) as e:
        sys.exit("yaml2json.py: %s: %s (quote the value in the YAML)" % (sys.argv[1], e))
    sys.stdout.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
