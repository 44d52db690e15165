// --format=sarif: SARIF 2.1.0 (its required structure checked by
// check-sarif.py) with a note at the peak and an error when over budget,
// located at the op's file, line and column.
// RUN: vram-opt %s --mode=train --budget=1GB --format=sarif > %t.within.sarif
// RUN: %check-sarif %t.within.sarif | FileCheck %s --check-prefix=WITHIN
// WITHIN: vram/peak-memory note {{[0-9]+}}
// WITHIN-NOT: vram/budget-exceeded

// Over budget (exit 1): the error result, at the peak op's line (here the
// loss's backward, located at the `return` that produces the model output).
// RUN: not vram-opt %s --mode=train --budget=1KB --format=sarif > %t.over.sarif 2>/dev/null
// RUN: %check-sarif %t.over.sarif | FileCheck %s --check-prefix=OVER
// OVER: vram/peak-memory note 28
// OVER-NEXT: vram/budget-exceeded error 28
// RUN: FileCheck %s --check-prefix=PROPS < %t.over.sarif
// PROPS-DAG: "budget_bytes": 1000,
// PROPS-DAG: "metric": "exact",
// PROPS-DAG: "text": "peak training memory (exact) {{.*}} exceeds the budget of 1000 B by

// Zoo layers are logical locations in "zoo:NAME".
// RUN: vram-opt --zoo=tiny_cnn --mode=train --format=sarif | FileCheck %s --check-prefix=ZOO
// ZOO: "logicalLocations": [
// ZOO: "uri": "zoo:tiny_cnn"

func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
