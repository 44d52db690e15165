// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train optimizer=sgd" --vram-lower-to-tensor

// An op without LowerToTensorOpInterface is a located error naming it.
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = nn.param "fc1.weight" : tensor<8x4xf32>
  %h = nn.linear %x, %w : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
  // expected-error @+1 {{'nn.gelu' has no lowering to tensors (LowerToTensorOpInterface)}}
  %g = nn.gelu %h : tensor<2x8xf32>
  %w2 = nn.param "fc2.weight" : tensor<3x8xf32>
  %o = nn.linear %g, %w2 : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
  return %o : tensor<2x3xf32>
}

// -----

// A case an op's lowering does not cover yet is an error at the op.
func.func @forward(%x: tensor<2x5x4xf32>) -> tensor<2x3xf32> {
  %w = nn.param "fc.weight" : tensor<3x4xf32>
  // expected-error @+1 {{nn.linear: the lowering supports a 2-D input only, got 'tensor<2x5x4xf32>'}}
  %y = nn.linear %x, %w : (tensor<2x5x4xf32>, tensor<3x4xf32>) -> tensor<2x5x3xf32>
  %f = nn.flatten %y {start_dim = 1 : i64} : (tensor<2x5x3xf32>) -> tensor<2x15xf32>
  %w2 = nn.param "head.weight" : tensor<3x15xf32>
  %o = nn.linear %f, %w2 : (tensor<2x15xf32>, tensor<3x15xf32>) -> tensor<2x3xf32>
  return %o : tensor<2x3xf32>
}
