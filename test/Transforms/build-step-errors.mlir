// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train"
// RUN: vram-opt %S/Inputs/two-outputs.mlir -verify-diagnostics --vram-build-step="mode=train loss-output=2"

// expected-error @+1 {{training needs to know which output the loss reads: the model returns 2 (#0 'tensor<2x8xf32>', #1 'tensor<2x8xf32>'): choose one with loss-output=N (--loss-output=N)}}
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

// -----

// An op without an autograd formula on a path that requires grad: an error,
// never a silent cut of gradient flow.
func.func private @opaque(tensor<4xf32>) -> tensor<4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %w = nn.param "w" : tensor<4xf32>
  // expected-error @+1 {{'func.call' has no autograd formula (AutodiffOpInterface) but operand #0 requires grad}}
  %c = func.call @opaque(%w) : (tensor<4xf32>) -> tensor<4xf32>
  %y = nn.add %x, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// Per-token logits need the model (or the user) to say so.
func.func @forward(%x: tensor<2x3x5xf32>) -> tensor<2x3x5xf32> {
  %w = nn.param "w" : tensor<5x5xf32>
  %y = nn.linear %x, %w : (tensor<2x3x5xf32>, tensor<5x5xf32>) -> tensor<2x3x5xf32>
  // expected-error @+1 {{cross_entropy over logits 'tensor<2x3x5xf32>' needs to know how to read them: mark @forward with nn.sequence_logits}}
  return %y : tensor<2x3x5xf32>
}
