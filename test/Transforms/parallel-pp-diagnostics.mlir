// vram-parallel pp=N's located errors, each at the op or function it is
// about (the CLI's usage errors are in parallel-pp-errors.test).
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-parallel="pp=2"

// No stack of repeated blocks (no layer path with an element index).
// expected-error @below {{pipeline parallelism splits one stack of repeated blocks into stages; the model has none (no layer path with an element index)}}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "fc.weight" : tensor<8x8xf32> loc("fc")
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("fc")
  return %y : tensor<2x8xf32>
}

// -----

// One block for two stages.
// expected-error @below {{pp=2 needs at least 2 repeated blocks to split, the model has 1 (layers.*)}}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "layers.0.fc.weight" : tensor<8x8xf32> loc("layers.0.fc")
  %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("layers.0.fc")
  return %y : tensor<2x8xf32>
}

// -----

// A weight read on both stages (tied): each would compute a part of its
// gradient.
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @below {{pipeline parallelism with a parameter used on two stages ('shared.weight' on stages 0 and 1: tied weights) is not modelled yet; untie it (tie_word_embeddings: false)}}
  %w = nn.param "shared.weight" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("layers.0.fc")
  %y = nn.linear %h, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("layers.1.fc")
  return %y : tensor<2x8xf32>
}
