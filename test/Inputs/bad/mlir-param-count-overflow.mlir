// ARGS: --mode=inference --format=json
// EXIT: 1
// ERROR: overflows
// Two buffers of 2^62 i8 elements: their count summed past INT64_MAX
// (signed-overflow UB in the parameter summary).
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = nn.buffer "a" : tensor<4611686018427387904xi8>
  %b = nn.buffer "b" : tensor<4611686018427387904xi8>
  %c = nn.buffer "c" : tensor<4611686018427387904xi8>
  return %x : tensor<2x4xf32>
}
