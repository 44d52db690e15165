// vram-onnx-raise on pooling: torch.onnx exports avg_pool2d(padding=p,
// count_include_pad=True) (inception_v3, googlenet) as Pad + AveragePool.
// Imported 1:1 the padded copy is what the pool's backward keeps; raised,
// the pool keeps its unpadded input, as PyTorch does.
// REQUIRES: onnx
// RUN: vram-opt %s -split-input-file --vram-onnx-raise | FileCheck %s
// RUN: sed -n '1,/^\/\/ -----/p' %s | vram-opt - --vram-onnx-raise --mode=train --loss=mse --format=json | FileCheck %s --check-prefix=SAVED

// CHECK-LABEL: func.func @forward
// CHECK-NEXT: nn.param
// CHECK-NEXT: nn.conv2d
// count_include_pad = true is the default, not printed.
// CHECK-NEXT: %[[P:.*]] = nn.avg_pool2d %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NOT: nn.pad
// The conv output [1, 4, 8, 8] (1024 bytes) is saved by the pool; the padded
// copy [1, 4, 10, 10] (1600 bytes) is gone.
// SAVED: "saved_for_backward_bytes": 1024,
func.func @forward(%x: tensor<1x3x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %w = nn.param "conv.weight" : tensor<4x3x1x1xf32>
  %c = nn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x1x1xf32>) -> tensor<1x4x8x8xf32>
  %p = nn.pad %c {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x10x10xf32>
  %y = nn.avg_pool2d %p {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// An asymmetric pad is no avg_pool2d padding: left alone.
// CHECK-LABEL: func.func @asymmetric
// CHECK: nn.pad
// CHECK: nn.avg_pool2d
func.func @asymmetric(%x: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  %p = nn.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 0, 2, 2>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x10x10xf32>
  %y = nn.avg_pool2d %p {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  return %y : tensor<1x4x8x8xf32>
}

// -----

// A non-zero pad value, or a padded tensor used twice: left alone.
// CHECK-LABEL: func.func @nonzero_or_shared
// CHECK: nn.pad
// CHECK-NEXT: nn.avg_pool2d {{.*}}tensor<1x4x10x10xf32>
// CHECK-NEXT: nn.pad
// CHECK-COUNT-2: nn.avg_pool2d {{.*}}tensor<1x4x10x10xf32>
func.func @nonzero_or_shared(%x: tensor<1x4x8x8xf32>) -> (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) {
  %p = nn.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, value = 1.0} : (tensor<1x4x8x8xf32>) -> tensor<1x4x10x10xf32>
  %a = nn.avg_pool2d %p {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  %q = nn.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>} : (tensor<1x4x8x8xf32>) -> tensor<1x4x10x10xf32>
  %b = nn.avg_pool2d %q {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  %c = nn.avg_pool2d %q {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>} : (tensor<1x4x10x10xf32>) -> tensor<1x4x8x8xf32>
  return %a, %b, %c : tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>
}
