// What each op's backward node keeps (reference/pytorch.md), one op per split,
// hand-computed. %y = linear(x) requires grad (64 bytes: 2x8 f32); the
// linear itself keeps only the model input x, which is not counted.
// RUN: vram-opt %s -split-input-file --mode=train --format=json | FileCheck %s
// relu keeps its output.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.relu %y : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// relu_ keeps the mutated tensor: the linear output, no new memory.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.relu %y {inplace} : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// gelu keeps its input.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.gelu %y : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// silu keeps its input.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.silu %y : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// sigmoid keeps its output.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.sigmoid %y : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// tanh keeps its output.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.tanh %y : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// softmax keeps its output.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.softmax %y {dim = 1 : i64} : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// dropout keeps a one-byte mask per element (16).
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 16,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.dropout %y {p = 5.000000e-01 : f64} : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// add keeps nothing.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 0,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %v = nn.param "v" : tensor<8x8xf32>
  %z = nn.linear %x, %v : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.add %y, %z : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// mul keeps both operands when both need grad.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 128,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %v = nn.param "v" : tensor<8x8xf32>
  %z = nn.linear %x, %v : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.mul %y, %z : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// layer_norm keeps input 64 + mean and rstd (2x1 f32, 8 each).
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 80,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %g = nn.param "g" : tensor<8xf32>
  %b = nn.param "b" : tensor<8xf32>
  %o = nn.layer_norm %y weight %g bias %b : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// concat keeps nothing (its output's linear keeps 128).
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 128,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %v = nn.param "v" : tensor<8x8xf32>
  %z = nn.linear %x, %v : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %c = nn.concat %y, %z {dim = 1 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x16xf32>
  %w3 = nn.param "w3" : tensor<8x16xf32>
  %o = nn.linear %c, %w3 : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// attention (flash) keeps q, k, v, output (64 each) and logsumexp [2] f32.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 264,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %wq = nn.param "wq" : tensor<8x8xf32>
  %q = nn.linear %x, %wq : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %wk = nn.param "wk" : tensor<8x8xf32>
  %k = nn.linear %x, %wk : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %wv = nn.param "wv" : tensor<8x8xf32>
  %v = nn.linear %x, %wv : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.scaled_dot_product_attention %q, %k, %v {backend = #nn<backend flash>} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// attention (math) keeps the scaled q, k, v (64 each) and the 2x2 probabilities.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 208,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %wq = nn.param "wq" : tensor<8x8xf32>
  %q = nn.linear %x, %wq : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %wk = nn.param "wk" : tensor<8x8xf32>
  %k = nn.linear %x, %wk : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %wv = nn.param "wv" : tensor<8x8xf32>
  %v = nn.linear %x, %wv : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %o = nn.scaled_dot_product_attention %q, %k, %v {backend = #nn<backend math>} : (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// max_pool2d keeps its input (128) and int64 indices of its output (64).
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 192,
func.func @forward(%x: tensor<1x1x4x4xf32>) -> tensor<1x8xf32> {
  %cw = nn.param "cw" : tensor<2x1x1x1xf32>
  %y = nn.conv2d %x, %cw : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %p = nn.max_pool2d %y {kernel_size = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %o = nn.flatten %p : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  return %o : tensor<1x8xf32>
}

// -----

// avg_pool2d keeps its input (128).
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 128,
func.func @forward(%x: tensor<1x1x4x4xf32>) -> tensor<1x8xf32> {
  %cw = nn.param "cw" : tensor<2x1x1x1xf32>
  %y = nn.conv2d %x, %cw : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %p = nn.avg_pool2d %y {kernel_size = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %o = nn.flatten %p : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  return %o : tensor<1x8xf32>
}

// -----

// batch_norm keeps its input (128) and per-channel mean and inverse std (2 x 8).
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 144,
func.func @forward(%x: tensor<1x1x4x4xf32>) -> tensor<1x32xf32> {
  %cw = nn.param "cw" : tensor<2x1x1x1xf32>
  %y = nn.conv2d %x, %cw : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>) -> tensor<1x2x4x4xf32>
  %g = nn.param "g" : tensor<2xf32>
  %b = nn.param "b" : tensor<2xf32>
  %n = nn.batch_norm %y weight %g bias %b : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %o = nn.flatten %n : (tensor<1x2x4x4xf32>) -> tensor<1x32xf32>
  return %o : tensor<1x32xf32>
}

// -----

// embedding keeps its indices, a model input: nothing counted.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 0,
func.func @forward(%x: tensor<2xi64>) -> tensor<2x8xf32> {
  %e = nn.param "e" : tensor<10x8xf32>
  %o = nn.embedding %e, %x : (tensor<10x8xf32>, tensor<2xi64>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// Frozen weights: nothing requires grad before the last linear, which keeps its input.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 64,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" {trainable = false} : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %r = nn.relu %y : tensor<2x8xf32>
  %w2 = nn.param "w2" : tensor<8x8xf32>
  %o = nn.linear %r, %w2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// pow keeps its input (64); sqrt and exp keep their results (64 each).
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 192,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %p = nn.pow %y {exponent = 3.0 : f64} : tensor<2x8xf32>
  %s = nn.sqrt %p : tensor<2x8xf32>
  %o = nn.exp %s : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}

// -----

// masked_fill keeps only its bool mask (16 bytes); neg keeps nothing.
// CHECK-NOT: "saved_for_backward_bytes"
// CHECK: "saved_for_backward_bytes": 16,
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %m = nn.constant dense<true> : tensor<2x8xi1>
  %f = nn.masked_fill %y, %m {value = 0.0 : f64} : (tensor<2x8xf32>, tensor<2x8xi1>) -> tensor<2x8xf32>
  %o = nn.neg %f : tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}
