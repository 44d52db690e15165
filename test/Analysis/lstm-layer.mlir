// nn.lstm_layer on the CPU (torch 2: oneDNN's LSTM primitive, one call per
// layer and direction). Every size below is a measured one, from
// benchmarks/accuracy/results/lstm-torch-2.15.0-cpu.json (torch 2.15.0,
// oneDNN 3.13.3, float32, one thread): the workspace autograd keeps and the
// allocations of the forward and backward calls, in the order PyTorch and
// oneDNN make them. By hand for x [T, B, I], H (f32, 4 KiB pages; ld(n) is
// n rounded up to 16, plus 16 when a multiple of 256):
//   workspace = pages of T·B·ld(4H)·4, T·B·ld(H)·4, then 2(T+1)B rows of
//               ld(max(I, H)), H, ld, ld, H floats, each part page-aligned
//   forward   = bias_ih + bias_hh (4H·4), weights [I, ld(4H)] and
//               [H, ld(4H)] (none for a one-row weight), scratchpad
//   scratchpad = pages(S·B·ld(4H)·4) + 2·pages(B·ld(H)·4) + 4096 + 568,
//               S = T (forward below 128 rows, backward) else 1
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train device=cpu optimizer=sgd loss=mse" --vram-print-memory -o /dev/null | FileCheck %s

// I 16, H 32, B 3, T 5: workspace 8192 + 4096 + 8192 x 4 + 4608 = 53,248
// (measured 53,248); forward 512, 16 x 128 x 4 = 8,192, 32 x 128 x 4 =
// 16,384, scratchpad 8,192 + 4,096 + 4,096 + 4,096 + 568 = 21,048 (all
// measured so). Backward: zeros for hy's and cy's missing gradients (384
// each), bias 512, diff_x (960, x needs none), diff_hx and diff_cx (384
// each), then oneDNN's 8,192, 16,384, 512 and the backward scratchpad
// 21,048 (measured: 8,192, 16,384, 512, 21,048).
// CHECK: nn.saved (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 53248 activations nn.saved tensor<53248xi8>
// CHECK: nn.lstm_layer (forward):
// CHECK-NEXT: alloc #{{[0-9]+}} 1920 activations nn.lstm_layer#0 tensor<5x3x32xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 384 activations nn.lstm_layer#1 tensor<3x32xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 384 activations nn.lstm_layer#2 tensor<3x32xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 8192 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 21048 temporaries workspace of nn.lstm_layer
// CHECK: nn.backward (backward):
// CHECK: nn.backward (backward):
// CHECK-NEXT: alloc #{{[0-9]+}} 8192 gradients nn.backward#0 tensor<128x16xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 gradients nn.backward#1 tensor<128x32xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 512 gradients nn.backward#2 tensor<128xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 512 gradients nn.backward#3 tensor<128xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 960 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 8192 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 21048 temporaries workspace of nn.backward
// CHECK-NEXT: live
func.func @forward(%x: tensor<5x3x16xf32>) -> tensor<5x3x32xf32> {
  %h = nn.constant dense<0.0> : tensor<3x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x16xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  %bih = nn.param "rnn.bias_ih_l0" : tensor<128xf32>
  %bhh = nn.param "rnn.bias_hh_l0" : tensor<128xf32>
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh, %bih, %bhh : (tensor<5x3x16xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x16xf32>, tensor<128x32xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y : tensor<5x3x32xf32>
}

// -----

// I 100: ld(100) = 112, so the backward transposes weight_ih into
// [128, 112] (57,344; measured 57,344) before the forward layouts
// [100, 128] (51,200) and [32, 128] (16,384); workspace 77,824 (measured).
// CHECK: alloc #{{[0-9]+}} 77824 activations nn.saved tensor<77824xi8>
// CHECK: nn.lstm_layer (forward):
// CHECK: alloc #{{[0-9]+}} 512 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 51200 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 21048 temporaries workspace of nn.lstm_layer
// CHECK: alloc #{{[0-9]+}} 57344 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 51200 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 21048 temporaries workspace of nn.backward
func.func @forward(%x: tensor<5x3x100xf32>) -> tensor<5x3x32xf32> {
  %h = nn.constant dense<0.0> : tensor<3x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x100xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  %bih = nn.param "rnn.bias_ih_l0" : tensor<128xf32>
  %bhh = nn.param "rnn.bias_hh_l0" : tensor<128xf32>
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh, %bih, %bhh : (tensor<5x3x100xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x100xf32>, tensor<128x32xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %y : tensor<5x3x32xf32>
}

// -----

// B 128: the forward no longer merges the steps' layer GEMM (scratchpad
// 65,536 + 16,384 + 16,384 + 4,096 + 568 = 102,968; measured), the
// backward does (327,680 + ... = 365,112; measured); workspace 1,392,640.
// CHECK: alloc #{{[0-9]+}} 1392640 activations nn.saved tensor<1392640xi8>
// CHECK: alloc #{{[0-9]+}} 102968 temporaries workspace of nn.lstm_layer
// CHECK: alloc #{{[0-9]+}} 365112 temporaries workspace of nn.backward
func.func @forward(%x: tensor<5x128x16xf32>) -> tensor<5x128x32xf32> {
  %h = nn.constant dense<0.0> : tensor<128x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x16xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  %bih = nn.param "rnn.bias_ih_l0" : tensor<128xf32>
  %bhh = nn.param "rnn.bias_hh_l0" : tensor<128xf32>
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh, %bih, %bhh : (tensor<5x128x16xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<128x16xf32>, tensor<128x32xf32>, tensor<128xf32>, tensor<128xf32>) -> (tensor<5x128x32xf32>, tensor<128x32xf32>, tensor<128x32xf32>)
  return %y : tensor<5x128x32xf32>
}

// -----

// I 1, no biases, gradient through hy only: weight_ih is one row, which the
// forward reads as it is (measured: 16,384 and 21,048 only) and the
// backward transposes ([128, 16], 8,192) and copies unpadded (512). Without
// biases mkldnn_rnn passes zeros of the weights' shapes, which autograd
// keeps ([128, 1] and [128, 32]: 512 + 16,384, as measured for I 16:
// [128, 16] and [128, 32]), and the layer
// adds a zero [4H] bias. The output's gradient is missing: zeros [5, 3, 32]
// (1,920) besides cy's (384).
// CHECK: alloc #{{[0-9]+}} 512 activations nn.saved tensor<128x1xf32>
// CHECK: alloc #{{[0-9]+}} 16384 activations nn.saved tensor<128x32xf32>
// CHECK: alloc #{{[0-9]+}} 53248 activations nn.saved tensor<53248xi8>
// CHECK: nn.lstm_layer (forward):
// CHECK: alloc #{{[0-9]+}} 512 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: alloc #{{[0-9]+}} 21048 temporaries workspace of nn.lstm_layer
// CHECK-NEXT: live
// CHECK: nn.backward (backward):
// CHECK: nn.backward (backward):
// CHECK-NEXT: alloc #{{[0-9]+}} 512 gradients nn.backward#0 tensor<128x1xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 gradients nn.backward#1 tensor<128x32xf32>
// CHECK-NEXT: alloc #{{[0-9]+}} 1920 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 60 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 8192 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 16384 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.backward
// CHECK-NEXT: alloc #{{[0-9]+}} 21048 temporaries workspace of nn.backward
func.func @forward(%x: tensor<5x3x1xf32>) -> tensor<3x32xf32> {
  %h = nn.constant dense<0.0> : tensor<3x32xf32>
  %wih = nn.param "rnn.weight_ih_l0" : tensor<128x1xf32>
  %whh = nn.param "rnn.weight_hh_l0" : tensor<128x32xf32>
  %y, %hy, %cy = nn.lstm_layer %x, %h, %h, %wih, %whh : (tensor<5x3x1xf32>, tensor<3x32xf32>, tensor<3x32xf32>, tensor<128x1xf32>, tensor<128x32xf32>) -> (tensor<5x3x32xf32>, tensor<3x32xf32>, tensor<3x32xf32>)
  return %hy : tensor<3x32xf32>
}
