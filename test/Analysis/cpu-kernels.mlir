// CPU kernel temporaries (torch 1.13 measurements, docs/Semantics.md), by hand.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=inference device=cpu" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=CPU
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=inference device=cuda" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=CUDA

// A batch-1 3x3 convolution of a small input runs the slow path, which
// unfolds the input into a column buffer while it runs: C_in * kh * kw *
// H_out * W_out * 4 = 2 * 3 * 3 * 4 * 4 * 4 = 1152 bytes. Input 128 + weight
// 216 persistent, output 192: live 344 + 192 + 1152 = 1688.
// CPU: [2] nn.conv2d (forward):
// CPU-NEXT:   alloc #2 192 temporaries nn.conv2d tensor<1x3x4x4xf32>
// CPU-NEXT:   alloc #3 1152 temporaries workspace of nn.conv2d
// CPU-NEXT:   live 1688
// CPU-NEXT:   free #3
// CUDA: [2] nn.conv2d (forward):
// CUDA-NEXT:   alloc #2 192 temporaries nn.conv2d tensor<1x3x4x4xf32>
// CUDA-NEXT:   live 536
func.func @forward(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x4x4xf32> {
  %w = nn.param "conv.weight" : tensor<3x2x3x3xf32>
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  return %y : tensor<1x3x4x4xf32>
}

// -----

// At batch 2 the oneDNN kernel runs, with no column buffer in the forward:
// input 256 + weight 216 + output 384 = 856.
// CPU: [2] nn.conv2d (forward):
// CPU-NEXT:   alloc #2 384 temporaries nn.conv2d tensor<2x3x4x4xf32>
// CPU-NEXT:   live 856
func.func @forward(%x: tensor<2x2x4x4xf32>) -> tensor<2x3x4x4xf32> {
  %w = nn.param "conv.weight" : tensor<3x2x3x3xf32>
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<2x3x4x4xf32>
  return %y : tensor<2x3x4x4xf32>
}

// -----

// A binary op over two dtypes: the CPU's TensorIterator copies the bf16
// operand into a float32 temporary before the loop, CUDA's kernels cast as
// they load (measured with torch 2.15 on the CPU, bf16 [2, 128, 256] + f32 peaks at
// 524,288 B, the result and the copy). Here [2, 8] bf16 + f32: the result
// 64 B, the copy 16 x 4 = 64 B. A 0-d operand (a scalar) is read as is.
// CPU: [1] nn.add (forward):
// CPU-NEXT:   alloc #3 64 temporaries nn.add tensor<2x8xf32>
// CPU-NEXT:   alloc #4 64 temporaries workspace of nn.add
// CUDA: [1] nn.add (forward):
// CUDA-NEXT:   alloc #3 64 temporaries nn.add tensor<2x8xf32>
// CUDA-NEXT:   live
// CPU: [2] nn.mul (forward):
// CPU-NEXT:   alloc #5 64 temporaries nn.mul tensor<2x8xf32>
// CPU-NEXT:   live
func.func @forward(%a: tensor<2x8xbf16>, %b: tensor<2x8xf32>, %s: tensor<f32>) -> tensor<2x8xf32> {
  %y = nn.add %a, %b : (tensor<2x8xbf16>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %z = nn.mul %y, %s : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %z : tensor<2x8xf32>
}
