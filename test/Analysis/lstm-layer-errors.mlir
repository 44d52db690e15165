// oneDNN's LSTM layer's memory is measured with torch 2 on the CPU in
// float32 training only: any other target is one located error at the
// layer, never a number without cuDNN's reserve space or oneDNN's inference
// scratchpad (torch 1.13's CPU runs LSTMCell instead:
// test/Transforms/build-step-lstm-cells.mlir).
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train device=cuda optimizer=sgd loss=mse"
// RUN: not vram-opt %S/lstm-layer.mlir -split-input-file --vram-build-step="mode=inference device=cpu" 2>&1 | FileCheck %s --check-prefix=INFERENCE
// RUN: not vram-opt %S/lstm-layer.mlir -split-input-file --vram-build-step="mode=train device=cuda torch-version=1.13 optimizer=sgd loss=mse" 2>&1 | FileCheck %s --check-prefix=V113
// INFERENCE: lstm-layer.mlir:1 offset :{{[0-9]+}}:{{[0-9]+}}: error: 'nn.lstm_layer' op torch.nn.LSTM's memory is not modelled in inference (oneDNN's inference scratchpad is not measured)
// V113: error: 'nn.lstm_layer' op torch.nn.LSTM's memory is not modelled on CUDA

func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x32xf32> {
  %h = nn.constant dense<0.0> : tensor<3x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x16xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  // expected-error @below {{torch.nn.LSTM's memory is not modelled on CUDA (cuDNN's RNN reserve space is not measured; analyse with --device=cpu)}}
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh : (tensor<5x3x16xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x16xf32>, tensor<128x32xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y : tensor<5x3x32xf32>
}

// -----

// The layer's own checks (its verifier).
func.func @forward(%x: tensor<5x3x16xf32>, %b: tensor<128xf32>) -> tensor<5x3x32xf32> {
  %h = nn.constant dense<0.0> : tensor<3x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x16xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  // expected-error @below {{takes bias_ih and bias_hh, or no bias, got 1 biases}}
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh, %b : (tensor<5x3x16xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x16xf32>, tensor<128x32xf32>, tensor<128xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y : tensor<5x3x32xf32>
}

// -----

func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x32xf32> {
  %h = nn.constant dense<0.0> : tensor<3x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x8xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  // expected-error @below {{weight_ih must be [128, 16] of the input's dtype, got [128, 8]}}
  // expected-error @below {{'nn.lstm_layer' op failed to infer returned types}}
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh : (tensor<5x3x16xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x8xf32>, tensor<128x32xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y : tensor<5x3x32xf32>
}

// -----

func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x32xf32> {
  %h = nn.constant dense<0.0> : tensor<4x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x16xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  // expected-error @below {{expects h [B, H] with B = 3, got [4, 32]}}
  // expected-error @below {{'nn.lstm_layer' op failed to infer returned types}}
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh : (tensor<5x3x16xf32>, tensor<4x32xf32>, tensor<4x32xf32>, tensor<128x16xf32>, tensor<128x32xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y : tensor<5x3x32xf32>
}

// -----

// An op of a module the CPU decomposes (torch.nn.GRU cell by cell): CUDA
// runs cuDNN's fused kernel instead.
func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x48xf32> {
  %w = nn.param "rnn.weight_ih_l0" : tensor<48x16xf32>
  // expected-error @below {{is part of torch.nn.GRU as the CPU runs it; CUDA runs cuDNN's fused kernel, whose reserve space is not measured (analyse with --device=cpu)}}
  %y = nn.linear %x, %w {nn.cpu_decomposition = "torch.nn.GRU"} : (tensor<5x3x16xf32>, tensor<48x16xf32>) -> tensor<5x3x48xf32>
  return %y : tensor<5x3x48xf32>
}

// -----

func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x48xf32> {
  %w = nn.param "rnn.weight_ih_l0" : tensor<48x16xf32>
  // expected-error @below {{'nn.cpu_decomposition' must be a module name}}
  %y = nn.linear %x, %w {nn.cpu_decomposition = ""} : (tensor<5x3x16xf32>, tensor<48x16xf32>) -> tensor<5x3x48xf32>
  return %y : tensor<5x3x48xf32>
}
