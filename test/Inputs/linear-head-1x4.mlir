// Two linear layers, q (256 -> 256) and the output layer head (256 -> 64),
// for the 4-bit weight tests (test/Transforms/quantize-memory.test).
func.func @forward(%x: tensor<1x4x256xf32>) -> tensor<1x4x64xf32> {
  %wq = nn.param "q.weight" : tensor<256x256xf32>
  %q = nn.linear %x, %wq : (tensor<1x4x256xf32>, tensor<256x256xf32>) -> tensor<1x4x256xf32>
  %wh = nn.param "head.weight" : tensor<64x256xf32>
  %y = nn.linear %q, %wh : (tensor<1x4x256xf32>, tensor<64x256xf32>) -> tensor<1x4x64xf32>
  return %y : tensor<1x4x64xf32>
}
