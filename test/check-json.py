#!/usr/bin/env python3
"""Compares numbers in a vram-opt JSON report with references.

    check-json.py REPORT FIELD EXPECTED [--rel TOL] [FIELD EXPECTED ...]

FIELD is a dotted path (memory.saved_for_backward_bytes), or two joined by
`-` (memory.peak_bytes-memory.persistent_bytes). EXPECTED is the
reference number (a PyTorch measurement or a hand computation, named in the
calling test), or @OTHER.json: the same field of another report (two front
ends of one model must agree). A leading `>` or `<` (`'>@full.json'`) asks
for a strictly greater or smaller value instead of an equal one, `>=` or
`<=` for one at least or at most the reference; a factor
before the reference scales it (`'<0.6667*@full.json'`: less than two thirds),
a number and `+` before it adds to it (`'816+@plain.json'`: 816 more). --rel TOL, placed after a pair, allows a relative error of TOL
for that pair (default 0: equal). Prints one line per check and exits 1 on
any mismatch."""
import json
import sys


def lookup(report, path):
    if "-" in path:
        first, second = path.split("-", 1)
        return lookup(report, first) - lookup(report, second)
    value = report
    for key in path.split("."):
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def main(argv):
    if len(argv) < 4:
        print(__doc__)
        return 2
    with open(argv[1]) as f:
        report = json.load(f)
    args = argv[2:]
    checks = []
    while args:
        field, expected = args[0], args[1]
        relation = "="
        if expected[:2] in (">=", "<="):
            relation, expected = expected[:2], expected[2:]
        elif expected[:1] in "<>":
            relation, expected = expected[0], expected[1:]
        factor, offset = 1.0, 0.0
        if "+@" in expected:
            offset, expected = expected.split("+", 1)
            offset = float(offset)
        if "*" in expected:
            factor, expected = expected.split("*", 1)
            factor = float(factor)
        if expected.startswith("@"):
            with open(expected[1:]) as f:
                expected = lookup(json.load(f), field)
        expected = factor * float(expected) + offset
        args = args[2:]
        tol = 0.0
        if args and args[0] == "--rel":
            tol = float(args[1])
            args = args[2:]
        checks.append((field, expected, tol, relation))
    ok = True
    for field, expected, tol, relation in checks:
        got = float(lookup(report, field))
        if relation != "=":
            good = {">": got > expected, "<": got < expected,
                    ">=": got >= expected, "<=": got <= expected}[relation]
            ok &= good
            print("%s %s: %d %s reference %d (%+.3f%%)" %
                  ("ok" if good else "FAIL", field, got, relation, expected,
                   100 * (got - expected) / expected if expected else 0))
            continue
        err = abs(got - expected) / abs(expected) if expected else abs(got)
        good = err <= tol
        ok &= good
        print("%s %s: %d vs reference %d (%+.3f%%, tolerance %.3f%%)" %
              ("ok" if good else "FAIL", field, got, expected,
               100 * (got - expected) / expected if expected else 0, 100 * tol))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
