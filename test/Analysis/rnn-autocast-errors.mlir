// Under torch.autocast the CPU's recurrent modules are not measured: their
// ops are one located error on the CPU too (CUDA: lstm-layer-errors.mlir).
// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train device=cpu optimizer=sgd loss=mse"

func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x48xf32> attributes {nn.autocast = bf16} {
  %w = nn.param "rnn.weight_ih_l0" : tensor<48x16xf32>
  // expected-error @below {{is part of torch.nn.GRU, whose memory under torch.autocast is not measured}}
  %y = nn.linear %x, %w {nn.cpu_decomposition = "torch.nn.GRU"} : (tensor<5x3x16xf32>, tensor<48x16xf32>) -> tensor<5x3x48xf32>
  return %y : tensor<5x3x48xf32>
}

// -----

func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x32xf32> attributes {nn.autocast = bf16} {
  %h = nn.constant dense<0.0> : tensor<3x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x16xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  // expected-error @below {{torch.nn.LSTM's memory is not modelled in another dtype than float32 (measured: float32)}}
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh : (tensor<5x3x16xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x16xf32>, tensor<128x32xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y : tensor<5x3x32xf32>
}
