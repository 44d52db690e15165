#!/usr/bin/env python3
"""Runs one vram-opt command on each model file; prints "ok FILE" or
"FAIL FILE: ..." per file and exits 1 when any fails.

usage: for-each-model.py [--expect TEXT] COMMAND... -- FILE...

A file's own `--loss=` (from its RUN lines, as in the generated per-op
tests) is added to the command, else --loss=mse. A run passes when it
exits 0, or, with --expect, when its output contains TEXT.
"""
import re
import subprocess
import sys


def main(argv):
    expect = None
    if argv[:1] == ["--expect"]:
        expect, argv = argv[1], argv[2:]
    split = argv.index("--")
    command, files = argv[:split], argv[split + 1:]
    if not files:
        print("no model files")
        return 1
    failed = False
    for path in files:
        with open(path) as f:
            loss = re.search(r"--loss=(\w+)", f.read())
        run = command + [path, "--loss=" + (loss.group(1) if loss else "mse")]
        p = subprocess.run(run, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        ok = expect in p.stdout if expect else p.returncode == 0
        if ok:
            print("ok " + path)
        else:
            failed = True
            out = p.stdout.splitlines()
            lines = [" ".join(out[i:i + 2]) for i, l in enumerate(out)
                     if "error" in l]
            print("FAIL %s: exit %d: %s" % (path, p.returncode,
                                            lines[0] if lines else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
