// torch 1.13 has no oneDNN LSTM: its CPU runs each layer and direction
// LSTMCell step by step (_lstm_impl in aten/src/ATen/native/RNN.cpp), so the
// step builder builds that in nn.lstm_layer's place (decomposeForTarget):
// the input's projection for every step at once (tagged for CUDA's check),
// unbound into steps; per step the hidden projection plus the step's input
// in place, its four chunks' sigmoid_ / tanh_ in place, (f * c).add_(i * g)
// and o * c.tanh(); the steps' h stacked; in reverse time order for the
// backward direction. Measured against torch 1.13 in
// test/Import/ONNX/recurrent.test and test/Import/Cxx/lstm.test (saved bytes
// exact).
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train device=cpu torch-version=1.13 optimizer=sgd loss=mse" | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK-NOT: nn.lstm_layer
// CHECK: %[[IG:.*]] = nn.linear %arg0, %{{.*}}, %{{.*}} {nn.cpu_decomposition = "torch.nn.LSTM"} : (tensor<3x2x4xf32>, tensor<32x4xf32>, tensor<32xf32>) -> tensor<3x2x32xf32>
// CHECK: %[[STEPS:.*]]:3 = nn.split %[[IG]] {dim = 0 : i64, sizes = array<i64: 1, 1, 1>, squeeze}
// The backward direction starts at the last step.
// CHECK: %[[HP:.*]] = nn.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8xf32>, tensor<32x8xf32>, tensor<32xf32>) -> tensor<2x32xf32>
// CHECK-NEXT: %[[G:.*]] = nn.add %[[HP]], %[[STEPS]]#2 {inplace}
// CHECK-NEXT: %[[C:.*]]:4 = nn.split %[[G]] {dim = 1 : i64, sizes = array<i64: 8, 8, 8, 8>}
// CHECK-NEXT: nn.sigmoid %[[C]]#0 {inplace}
// CHECK-NEXT: nn.sigmoid %[[C]]#1 {inplace}
// CHECK-NEXT: nn.tanh %[[C]]#2 {inplace}
// CHECK-NEXT: nn.sigmoid %[[C]]#3 {inplace}
// CHECK: nn.concat %{{.*}} {dim = 0 : i64} : (tensor<1x2x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<3x2x8xf32>
// CHECK-NOT: nn.lstm_layer
// CHECK: nn.backward
func.func @forward(%x: tensor<3x2x4xf32>) -> tensor<3x2x8xf32> {
  %h = nn.constant dense<0.0> : tensor<2x8xf32>
  %wih = nn.param "rnn.weight_ih_l0_reverse" : tensor<32x4xf32>
  %whh = nn.param "rnn.weight_hh_l0_reverse" : tensor<32x8xf32>
  %bih = nn.param "rnn.bias_ih_l0_reverse" : tensor<32xf32>
  %bhh = nn.param "rnn.bias_hh_l0_reverse" : tensor<32xf32>
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh, %bih, %bhh {reverse} : (tensor<3x2x4xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<32x4xf32>, tensor<32x8xf32>, tensor<32xf32>, tensor<32xf32>) -> (tensor<3x2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
  return %y : tensor<3x2x8xf32>
}

