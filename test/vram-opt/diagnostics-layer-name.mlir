// A diagnostic at a named location (a layer's loc("NAME"), as front ends
// locate the ops they build) names the layer before the message, unless
// the message already names it quoted (the ONNX importer's "node 'NAME'
// (Op): ..."). A layer whose name is only a substring of the message is
// still named: torchtitan calls lm_head "output", which
// 'nn.all_gather_output' contains.
// RUN: not vram-opt %s --mode=inference 2>&1 | FileCheck %s
// CHECK: error: output: 'nn.all_gather_output' op needs 2 <= ranks <= 262144, got 1

func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = nn.all_gather_output %x {ranks = 1 : i64} : tensor<2x8xf32> -> tensor<2x8xf32> loc("output")
  return %y : tensor<2x8xf32>
}
