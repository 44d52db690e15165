#!/usr/bin/env python3
"""Compares every .npy of EXPECTED_DIR with the same file in ACTUAL_DIR.

Per tensor, the error is max|actual - expected| / max|expected| (the
infinity-norm relative error); a tensor passes when it is <= --rtol. Prints
one line per file and exits 1 when a file is missing, has another shape or
dtype, or fails. Standard library only (no numpy).
"""
import argparse
import ast
import os
import struct
import sys


def read_npy(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(path + ": not a .npy file")
    major = data[6]
    if major == 1:
        (length,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (length,) = struct.unpack("<I", data[8:12])
        start = 12
    header = ast.literal_eval(data[start:start + length].decode("latin1"))
    if header["fortran_order"]:
        raise ValueError(path + ": Fortran order")
    codes = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i"}
    descr = header["descr"]
    if descr not in codes:
        raise ValueError(path + ": unsupported dtype " + descr)
    count = 1
    for d in header["shape"]:
        count *= d
    body = data[start + length:]
    values = struct.unpack("<%d%s" % (count, codes[descr]), body)
    return descr, tuple(header["shape"]), values


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("expected")
    parser.add_argument("actual")
    parser.add_argument("--rtol", type=float, default=1e-4)
    args = parser.parse_args()
    failed = False
    names = sorted(n for n in os.listdir(args.expected) if n.endswith(".npy"))
    if not names:
        print("no .npy files in " + args.expected)
        return 1
    for name in names:
        actual_path = os.path.join(args.actual, name)
        if not os.path.exists(actual_path):
            print("FAIL %s: missing" % name)
            failed = True
            continue
        e_descr, e_shape, e = read_npy(os.path.join(args.expected, name))
        a_descr, a_shape, a = read_npy(actual_path)
        if (e_descr, e_shape) != (a_descr, a_shape):
            print("FAIL %s: %s %s, expected %s %s" %
                  (name, a_descr, a_shape, e_descr, e_shape))
            failed = True
            continue
        scale = max(abs(v) for v in e) or 1.0
        err = max(abs(x - y) for x, y in zip(a, e)) / scale
        ok = err <= args.rtol
        failed |= not ok
        print("%s %s: relative error %.2e" % ("ok" if ok else "FAIL", name, err))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
