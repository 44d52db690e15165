// nn.keep_alive: Python frames hold tensors past their last use by an op
// (a module's locals until it returns, the arguments its caller passed).
// By hand, inference on the CPU, the input 4 x 8 x 4 = 128 B persistent:
// relu %a (256), relu %b (384; %a's last op use frees it: 256), relu %c
// (384; %b freed: 256): peak 384. With %a held until after %c, %c's relu
// runs with %x, %a, %b and %c alive: 512.
// RUN: vram-opt %s -split-input-file --mode=inference --device=cpu --format=json | FileCheck %s

// CHECK: "peak_bytes": 384,
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = nn.relu %x : tensor<4x8xf32>
  %b = nn.relu %a : tensor<4x8xf32>
  %c = nn.relu %b : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}

// -----

// CHECK: "peak_bytes": 512,
func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %a = nn.relu %x : tensor<4x8xf32>
  %b = nn.relu %a : tensor<4x8xf32>
  %c = nn.relu %b : tensor<4x8xf32>
  nn.keep_alive %a : tensor<4x8xf32>
  return %c : tensor<4x8xf32>
}
