// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train optimizer=sgd" --vram-lower-to-tensor

// An op without LowerToTensorOpInterface is a located error naming it.
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x3xf32> {
  %w = nn.param "fc1.weight" : tensor<8x4xf32>
  %h = nn.linear %x, %w : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
  // (every nn op has a model; autocast's region end, outside an autocast
  // step, reaches the interface check)
  // expected-error @+1 {{'nn.autocast_exit' has no lowering to tensors (LowerToTensorOpInterface)}}
  nn.autocast_exit %h : tensor<2x8xf32>
  %w2 = nn.param "fc2.weight" : tensor<3x8xf32>
  %o = nn.linear %h, %w2 : (tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x3xf32>
  return %o : tensor<2x3xf32>
}

// -----

// A case an op's lowering does not cover is an error at the op.
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.param "fc.weight" : tensor<4x4xf32>
  %h = nn.linear %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %c = nn.constant dense<2.000000e+00> : tensor<f64>
  // expected-error @+1 {{nn.mul: the lowering does not support operands of another element type than the result ('tensor<f64>' for 'tensor<2x4xf32>')}}
  %y = nn.mul %h, %c : (tensor<2x4xf32>, tensor<f64>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

