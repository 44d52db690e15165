// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train"

// expected-error @+1 {{training needs a model with one output for the loss, got 2}}
func.func @forward(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %w = nn.param "w" : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %y, %x : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" {trainable = false} : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  // expected-error @+1 {{nothing requires grad: the model has no trainable parameter on the path to the loss}}
  return %y : tensor<2x8xf32>
}

// -----

func.func @forward(%x: tensor<8xf32>) -> tensor<8xf32> {
  %w = nn.param "w" : tensor<8xf32>
  %y = nn.mul %x, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  // expected-error @+1 {{cross_entropy needs logits of rank >= 2, got 'tensor<8xf32>'}}
  return %y : tensor<8xf32>
}

// -----

// expected-error @+1 {{no function @forward to build a step from}}
module {
  func.func @model(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    return %x : tensor<2x8xf32>
  }
}
