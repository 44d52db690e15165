#!/usr/bin/env python3
"""Runs vram-opt on every input of test/Inputs/bad and checks its header.

Each file states the flags to add (ARGS:), the exit code (EXIT:), text its
diagnostics must contain (ERROR:) and text its output must contain
(STDOUT:); see test/Inputs/bad/README.md. Prints one line per input and a
closing 'N passed, N failed'; exits 1 when any input failed.

usage: check-bad-inputs.py VRAM_OPT BAD_DIR TMP_DIR
"""
import os
import shlex
import subprocess
import sys

vram_opt, bad_dir, tmp_dir = sys.argv[1:4]
os.makedirs(tmp_dir, exist_ok=True)
passed = failed = 0
for name in sorted(os.listdir(bad_dir)):
    path = os.path.join(bad_dir, name)
    stem, ext = os.path.splitext(name)
    if ext not in (".mlir", ".textproto", ".gen"):
        continue
    header = {"ARGS": [], "EXIT": [], "ERROR": [], "STDOUT": []}
    with open(path) as f:
        for line in f:
            text = line.lstrip("/# ").rstrip("\n")
            key, _, value = text.partition(": ")
            if key in header:
                header[key].append(value)
    # The input vram-opt reads, named as in the expected messages.
    if ext == ".textproto":
        model = os.path.join(tmp_dir, stem + ".onnx")
        with open(path) as src, open(model, "wb") as dst:
            subprocess.run(["protoc", "--encode=onnx.ModelProto", "-I/usr/include",
                            "/usr/include/onnx/onnx.proto"], stdin=src, stdout=dst,
                           check=True)
    elif ext == ".gen":
        model = os.path.join(tmp_dir, stem)
        subprocess.run([sys.executable, path, model], check=True)
        model += ".mlir"
    else:
        model = path
    args = [vram_opt, model] + [a for spec in header["ARGS"]
                                for a in shlex.split(spec.replace("%s", model))]
    try:
        run = subprocess.run(args, capture_output=True, text=True, timeout=120)
        code, out, err = run.returncode, run.stdout, run.stderr
    except subprocess.TimeoutExpired:
        code, out, err = "timeout", "", ""
    problems = []
    want = int(header["EXIT"][0]) if header["EXIT"] else 1
    if code != want:
        problems.append("exit %s, expected %d" % (code, want))
    problems += ["diagnostics lack %r" % e for e in header["ERROR"] if e not in err]
    problems += ["output lacks %r" % s for s in header["STDOUT"] if s not in out]
    if problems:
        failed += 1
        print("FAIL %s: %s" % (name, "; ".join(problems)))
        print("  command: " + " ".join(shlex.quote(a) for a in args))
        print("  stderr: " + err.strip().replace("\n", "\n          ")[:2000])
    else:
        passed += 1
        print("PASS %s (exit %s)" % (name, code))
print("bad inputs: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
