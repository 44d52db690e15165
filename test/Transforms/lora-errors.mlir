// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-lora="r=4 targets=conv2d"

// peft requires the rank to be divisible by the convolution's groups.
func.func @forward(%x: tensor<1x6x8x8xf32>) -> tensor<1x6x8x8xf32> {
  %w = nn.param "dw.weight" : tensor<6x2x3x3xf32>
  // expected-error @below {{LoRA rank 4 is not divisible by the convolution's groups (3), which peft requires}}
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>, groups = 3 : i64} : (tensor<1x6x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x8x8xf32>
  return %y : tensor<1x6x8x8xf32>
}

// -----

// peft's lora_A drops the dilation: its output cannot be added.
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.param "conv.weight" : tensor<4x3x3x3xf32>
  // expected-error @below {{LoRA's lora_A (the base kernel, stride and padding without its dilation, as peft builds it) gives 'tensor<1x4x10x10xf32>', which cannot be added to the layer's 'tensor<1x4x8x8xf32>'}}
  %y = nn.conv2d %x, %w {padding = array<i64: 2, 2>, dilation = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// expected-error @below {{no conv2d or linear layer with a weight parameter matches the LoRA targets}}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = nn.relu %x : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
