// ARGS: --mode=train --flatten-logits
// EXIT: 1
// ERROR: mlir-flatten-overflow.mlir:7:3: error: flattening logits 'tensor<4294967296x4294967296x1xf32>': batch x sequence overflows int64
// Batch x sequence of the logits overflowed int64 when flattened for the
// loss (signed-overflow UB).
func.func @forward(%x: tensor<4294967296x4294967296x1xf32>) -> tensor<4294967296x4294967296x1xf32> {
  return %x : tensor<4294967296x4294967296x1xf32>
}
