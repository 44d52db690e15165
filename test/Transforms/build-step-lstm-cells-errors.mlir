// torch 1.13's CPU LSTM built cell by cell (build-step-lstm-cells.mlir):
// a sequence whose cells would unroll past 2^20 ops (20 a step) is one
// error at the layer.
// RUN: vram-opt %s -verify-diagnostics --vram-build-step="mode=train device=cpu torch-version=1.13 optimizer=sgd loss=mse" -o /dev/null

func.func @forward(%x: tensor<60000x1x1xf32>) -> tensor<60000x1x1xf32> {
  %h = nn.constant dense<0.0> : tensor<1x1xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<4x1xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<4x1xf32>
  // expected-error @below {{an LSTM of 60000 steps, 1 layers and 1 directions unrolls into more than 2^20 ops; analyse a shorter sequence (the saved bytes grow linearly in it)}}
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh : (tensor<60000x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> (tensor<60000x1x1xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
  return %y : tensor<60000x1x1xf32>
}
