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
// OVER: vram/peak-memory note 60
// OVER-NEXT: vram/budget-exceeded error 60
// RUN: FileCheck %s --check-prefix=PROPS < %t.over.sarif
// PROPS-DAG: "budget_bytes": 1000,
// PROPS-DAG: "metric": "exact",
// PROPS-DAG: "text": "peak training memory (exact) {{.*}} exceeds the budget of 1000 B by

// What GitHub code scanning needs (check-sarif.py checks each): a file under
// the working directory is a URI relative to %SRCROOT%, which the run
// defines; the fingerprint follows the finding (rule, model, layer), not
// its numbers: tiny_cnn at batch 1 and 4 peaks at `relu` with other bytes.
// RUN: cd %S && vram-opt sarif.mlir --mode=train --format=sarif > %t.rel.sarif
// RUN: %check-sarif %t.rel.sarif
// RUN: FileCheck %s --check-prefix=REL < %t.rel.sarif
// REL: "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
// REL: "automationDetails": {
// REL-NEXT: "id": "vram-opt/sarif/"
// REL: "originalUriBaseIds": {
// REL-NEXT: "%SRCROOT%": {
// REL-NEXT: "uri": "file:///
// REL: "uri": "sarif.mlir",
// REL-NEXT: "uriBaseId": "%SRCROOT%"
// REL: "fullDescription": {
// REL: "help": {
// RUN: vram-opt --zoo=tiny_cnn --batch=1 --mode=train --format=sarif | grep -A1 -e vramFinding -e '"text": "peak' > %t.fp1
// RUN: vram-opt --zoo=tiny_cnn --batch=4 --mode=train --format=sarif | grep -A1 -e vramFinding -e '"text": "peak' > %t.fp4
// Both peak at relu, with other bytes (the messages differ), and the same
// fingerprint.
// RUN: FileCheck %s --check-prefix=FP < %t.fp1
// RUN: FileCheck %s --check-prefix=FP < %t.fp4
// FP: peak training memory {{[0-9.]+ [KM]i?B}} at relu
// RUN: grep '"text": "peak' %t.fp1 > %t.msg1
// RUN: grep '"text": "peak' %t.fp4 > %t.msg4
// RUN: not diff %t.msg1 %t.msg4
// RUN: grep vramFinding %t.fp1 > %t.fp1.only
// RUN: grep vramFinding %t.fp4 > %t.fp4.only
// RUN: diff %t.fp1.only %t.fp4.only

// Zoo layers are logical locations in "zoo:NAME" (line 1 stands in for the
// line a built-in model does not have).
// RUN: vram-opt --zoo=tiny_cnn --mode=train --format=sarif | FileCheck %s --check-prefix=ZOO
// ZOO: "logicalLocations": [
// ZOO: "uri": "zoo:tiny_cnn"

func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
