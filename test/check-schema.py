#!/usr/bin/env python3
"""Validates JSON reports against docs/report.schema.json (JSON Schema 2020-12),
or against another schema given with --schema (its own $schema draft, e.g.
the official SARIF 2.1.0 schema, draft-04).

    check-schema.py [--schema SCHEMA.json] REPORT.json [REPORT.json ...]

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
    schema_path = SCHEMA
    if paths[:1] == ["--schema"]:
        schema_path, paths = paths[1], paths[2:]
    schema = json.load(open(schema_path))
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    cls.check_schema(schema)
    validator = cls(schema)
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
