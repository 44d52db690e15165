#!/usr/bin/env python3
"""Writes an nn IR model: a chain of N linear+relu layers of width W.

The scale test of issue 20: a training report over it should cost time
linear in N. Time the whole process with farm-bench, e.g.

  python3 benchmarks/generate_chain.py 100000 > /tmp/chain100k.mlir
  farm-bench -- build/bin/vram-opt /tmp/chain100k.mlir --mode=train --format=json

usage: generate_chain.py LAYERS [WIDTH] [BATCH]
"""
import sys

layers = int(sys.argv[1])
width = int(sys.argv[2]) if len(sys.argv) > 2 else 64
batch = int(sys.argv[3]) if len(sys.argv) > 3 else 8
t = "tensor<%dx%dxf32>" % (batch, width)
w = "tensor<%dx%dxf32>" % (width, width)
out = sys.stdout
out.write("func.func @forward(%%x: %s) -> %s {\n" % (t, t))
prev = "%x"
for i in range(layers):
    out.write('  %%w%d = nn.param "l%d.weight" : %s\n' % (i, i, w))
    out.write("  %%h%d = nn.linear %s, %%w%d : (%s, %s) -> %s\n" % (i, prev, i, t, w, t))
    out.write("  %%r%d = nn.relu %%h%d : %s\n" % (i, i, t))
    prev = "%%r%d" % i
out.write("  return %s : %s\n}\n" % (prev, t))
