#!/usr/bin/env python3
"""Validates JSON reports against docs/report.schema.json (JSON Schema 2020-12).

    check-schema.py REPORT.json [REPORT.json ...]

Prints `valid NAME` per report, or the first violation with its path and
exits 1. Needs the jsonschema module (test/lit.cfg.py makes the tests that
use this script unsupported without it)."""
import json
import os
import sys

import jsonschema

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs",
                      "report.schema.json")


def main(paths):
    schema = json.load(open(SCHEMA))
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    status = 0
    for path in paths:
        errors = sorted(validator.iter_errors(json.load(open(path))),
                        key=lambda e: list(e.absolute_path))
        if errors:
            e = errors[0]
            where = "/".join(str(p) for p in e.absolute_path) or "(root)"
            print("invalid %s: %s: %s" % (os.path.basename(path), where, e.message))
            status = 1
        else:
            print("valid " + os.path.basename(path))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
