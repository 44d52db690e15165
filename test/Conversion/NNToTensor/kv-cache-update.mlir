// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=inference" --vram-lower-to-tensor

// A training forward's DynamicCache update (no past) is a copy of the
// states into a new tensor.
func.func @forward(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %c = nn.kv_cache_update %x : (tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %c : tensor<1x2x4x8xf32>
}

// -----

// Appending to a past cache is generation's, which is not executed: an
// error at the op.
func.func @forward(%x: tensor<1x2x4x8xf32>, %p: tensor<1x2x3x8xf32>) -> tensor<1x2x7x8xf32> {
  // expected-error @+1 {{nn.kv_cache_update: the lowering does not support a copy of more than one operand (a past cache: generation)}}
  %c = nn.kv_cache_update past %p, %x : (tensor<1x2x3x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x7x8xf32>
  return %c : tensor<1x2x7x8xf32>
}
