// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-checkpoint="modules=a"

// The pass rewrites a built training step, not a forward model.
// expected-error @below {{activation checkpointing needs a built training step @step (run vram-build-step with mode=train first)}}
module {
  func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %y = nn.relu %x : tensor<2x8xf32> loc("a")
    return %y : tensor<2x8xf32>
  }
}
