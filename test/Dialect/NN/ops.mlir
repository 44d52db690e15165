// Round-trip test of every nn op: parse, verify, print, and parse the printed
// form again. Also checks that the generic form parses and re-prints as the
// custom form, and that default-valued attributes are elided.

// RUN: vram-opt --format=mlir %s | vram-opt --format=mlir - | FileCheck %s
// RUN: vram-opt --format=mlir %s -mlir-print-op-generic | vram-opt --format=mlir - | FileCheck %s

func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>,
                  %xg: tensor<1x4x8x8xf32>, %wg: tensor<8x2x3x3xf32>, %wd: tensor<4x1x3x3xf32>,
                  %xh: tensor<2x3x16x16xf16>, %wh: tensor<8x3x5x5xf16>, %bh: tensor<8xf16>) {
  // CHECK-LABEL: func.func @conv2d(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<1x3x8x8xf32>, %[[ARG1:arg[0-9]+]]: tensor<4x3x3x3xf32>, %[[ARG2:arg[0-9]+]]: tensor<4xf32>, %[[ARG3:arg[0-9]+]]: tensor<1x4x8x8xf32>, %[[ARG4:arg[0-9]+]]: tensor<8x2x3x3xf32>, %[[ARG5:arg[0-9]+]]: tensor<4x1x3x3xf32>, %[[ARG6:arg[0-9]+]]: tensor<2x3x16x16xf16>, %[[ARG7:arg[0-9]+]]: tensor<8x3x5x5xf16>, %[[ARG8:arg[0-9]+]]: tensor<8xf16>) {
  %0 = nn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.conv2d %[[ARG0]], %[[ARG1]], %[[ARG2]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %1 = nn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.conv2d %[[ARG0]], %[[ARG1]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %2 = nn.conv2d %x, %w {strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.conv2d %[[ARG0]], %[[ARG1]] {padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %3 = nn.conv2d %x, %w {dilation = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.conv2d %[[ARG0]], %[[ARG1]] {dilation = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %4 = nn.conv2d %xg, %wg {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.conv2d %[[ARG3]], %[[ARG4]] {groups = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x6x6xf32>
  %5 = nn.conv2d %xg, %wd, %b {groups = 4 : i64, padding = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.conv2d %[[ARG3]], %[[ARG5]], %[[ARG2]] {groups = 4 : i64, padding = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %6 = nn.conv2d %xh, %wh, %bh {strides = array<i64: 2, 1>, padding = array<i64: 2, 0>} : (tensor<2x3x16x16xf16>, tensor<8x3x5x5xf16>, tensor<8xf16>) -> tensor<2x8x8x12xf16>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.conv2d %[[ARG6]], %[[ARG7]], %[[ARG8]] {padding = array<i64: 2, 0>, strides = array<i64: 2, 1>} : (tensor<2x3x16x16xf16>, tensor<8x3x5x5xf16>, tensor<8xf16>) -> tensor<2x8x8x12xf16>
  // Default-valued attributes spelled out are elided when printed.
  %7 = nn.conv2d %x, %w {strides = array<i64: 1, 1>, padding = array<i64: 0, 0>, dilation = array<i64: 1, 1>, groups = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  // CHECK-NEXT: %[[V7:[0-9]+]] = nn.conv2d %[[ARG0]], %[[ARG1]] : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
  // CHECK-NEXT: return
}

func.func @linear(%x: tensor<2x512xf32>, %w: tensor<10x512xf32>, %b: tensor<10xf32>,
                  %s: tensor<2x128x64xbf16>, %ws: tensor<32x64xbf16>, %v: tensor<512xf32>) {
  // CHECK-LABEL: func.func @linear(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x512xf32>, %[[ARG1:arg[0-9]+]]: tensor<10x512xf32>, %[[ARG2:arg[0-9]+]]: tensor<10xf32>, %[[ARG3:arg[0-9]+]]: tensor<2x128x64xbf16>, %[[ARG4:arg[0-9]+]]: tensor<32x64xbf16>, %[[ARG5:arg[0-9]+]]: tensor<512xf32>) {
  %0 = nn.linear %x, %w, %b : (tensor<2x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.linear %[[ARG0]], %[[ARG1]], %[[ARG2]] : (tensor<2x512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  %1 = nn.linear %x, %w : (tensor<2x512xf32>, tensor<10x512xf32>) -> tensor<2x10xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.linear %[[ARG0]], %[[ARG1]] : (tensor<2x512xf32>, tensor<10x512xf32>) -> tensor<2x10xf32>
  %2 = nn.linear %s, %ws : (tensor<2x128x64xbf16>, tensor<32x64xbf16>) -> tensor<2x128x32xbf16>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.linear %[[ARG3]], %[[ARG4]] : (tensor<2x128x64xbf16>, tensor<32x64xbf16>) -> tensor<2x128x32xbf16>
  %3 = nn.linear %v, %w, %b : (tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<10xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.linear %[[ARG5]], %[[ARG1]], %[[ARG2]] : (tensor<512xf32>, tensor<10x512xf32>, tensor<10xf32>) -> tensor<10xf32>
  return
  // CHECK-NEXT: return
}

func.func @matmul(%q: tensor<2x8x128x32xf32>, %kt: tensor<2x8x32x128xf32>,
                  %a: tensor<8x1x4x16xf32>, %b: tensor<3x16x5xf32>,
                  %m: tensor<4x16xf32>, %n: tensor<16x5xf32>, %c: tensor<3x4x16xf32>) {
  // CHECK-LABEL: func.func @matmul(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x8x128x32xf32>, %[[ARG1:arg[0-9]+]]: tensor<2x8x32x128xf32>, %[[ARG2:arg[0-9]+]]: tensor<8x1x4x16xf32>, %[[ARG3:arg[0-9]+]]: tensor<3x16x5xf32>, %[[ARG4:arg[0-9]+]]: tensor<4x16xf32>, %[[ARG5:arg[0-9]+]]: tensor<16x5xf32>, %[[ARG6:arg[0-9]+]]: tensor<3x4x16xf32>) {
  %0 = nn.matmul %q, %kt : (tensor<2x8x128x32xf32>, tensor<2x8x32x128xf32>) -> tensor<2x8x128x128xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.matmul %[[ARG0]], %[[ARG1]] : (tensor<2x8x128x32xf32>, tensor<2x8x32x128xf32>) -> tensor<2x8x128x128xf32>
  %1 = nn.matmul %a, %b : (tensor<8x1x4x16xf32>, tensor<3x16x5xf32>) -> tensor<8x3x4x5xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.matmul %[[ARG2]], %[[ARG3]] : (tensor<8x1x4x16xf32>, tensor<3x16x5xf32>) -> tensor<8x3x4x5xf32>
  %2 = nn.matmul %m, %n : (tensor<4x16xf32>, tensor<16x5xf32>) -> tensor<4x5xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.matmul %[[ARG4]], %[[ARG5]] : (tensor<4x16xf32>, tensor<16x5xf32>) -> tensor<4x5xf32>
  %3 = nn.matmul %c, %n : (tensor<3x4x16xf32>, tensor<16x5xf32>) -> tensor<3x4x5xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.matmul %[[ARG6]], %[[ARG5]] : (tensor<3x4x16xf32>, tensor<16x5xf32>) -> tensor<3x4x5xf32>
  return
  // CHECK-NEXT: return
}

func.func @bmm(%a: tensor<4x16x8xf32>, %b: tensor<4x8x32xf32>) -> tensor<4x16x32xf32> {
  // CHECK-LABEL: func.func @bmm(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<4x16x8xf32>, %[[ARG1:arg[0-9]+]]: tensor<4x8x32xf32>) -> tensor<4x16x32xf32> {
  %0 = nn.bmm %a, %b : (tensor<4x16x8xf32>, tensor<4x8x32xf32>) -> tensor<4x16x32xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.bmm %[[ARG0]], %[[ARG1]] : (tensor<4x16x8xf32>, tensor<4x8x32xf32>) -> tensor<4x16x32xf32>
  return %0 : tensor<4x16x32xf32>
  // CHECK-NEXT: return %[[V0]] : tensor<4x16x32xf32>
}
func.func @batch_norm(%x: tensor<2x64x56x56xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>,
                      %m: tensor<64xf32>, %v: tensor<64xf32>, %x1: tensor<8x64xf32>) {
  // CHECK-LABEL: func.func @batch_norm(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x64x56x56xf32>, %[[ARG1:arg[0-9]+]]: tensor<64xf32>, %[[ARG2:arg[0-9]+]]: tensor<64xf32>, %[[ARG3:arg[0-9]+]]: tensor<64xf32>, %[[ARG4:arg[0-9]+]]: tensor<64xf32>, %[[ARG5:arg[0-9]+]]: tensor<8x64xf32>) {
  %0 = nn.batch_norm %x weight %g bias %b stats %m, %v : (tensor<2x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.batch_norm %[[ARG0]] weight %[[ARG1]] bias %[[ARG2]] stats %[[ARG3]], %[[ARG4]] : (tensor<2x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  %1 = nn.batch_norm %x : (tensor<2x64x56x56xf32>) -> tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.batch_norm %[[ARG0]] : (tensor<2x64x56x56xf32>) -> tensor<2x64x56x56xf32>
  %2 = nn.batch_norm %x weight %g bias %b : (tensor<2x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.batch_norm %[[ARG0]] weight %[[ARG1]] bias %[[ARG2]] : (tensor<2x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  %3 = nn.batch_norm %x stats %m, %v {eps = 1.000000e-03 : f64, momentum = 0.01 : f64} : (tensor<2x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.batch_norm %[[ARG0]] stats %[[ARG3]], %[[ARG4]] {eps = 1.000000e-03 : f64, momentum = 1.000000e-02 : f64} : (tensor<2x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x56x56xf32>
  %4 = nn.batch_norm %x1 weight %g bias %b stats %m, %v : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.batch_norm %[[ARG5]] weight %[[ARG1]] bias %[[ARG2]] stats %[[ARG3]], %[[ARG4]] : (tensor<8x64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  return
  // CHECK-NEXT: return
}

func.func @layer_norm(%x: tensor<2x128x256xf32>, %g: tensor<256xf32>, %b: tensor<256xf32>, %g2: tensor<128x256xf32>) {
  // CHECK-LABEL: func.func @layer_norm(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x128x256xf32>, %[[ARG1:arg[0-9]+]]: tensor<256xf32>, %[[ARG2:arg[0-9]+]]: tensor<256xf32>, %[[ARG3:arg[0-9]+]]: tensor<128x256xf32>) {
  %0 = nn.layer_norm %x weight %g bias %b : (tensor<2x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.layer_norm %[[ARG0]] weight %[[ARG1]] bias %[[ARG2]] : (tensor<2x128x256xf32>, tensor<256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
  %1 = nn.layer_norm %x {normalized_rank = 1 : i64, eps = 1.000000e-05 : f64} : (tensor<2x128x256xf32>) -> tensor<2x128x256xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.layer_norm %[[ARG0]] : (tensor<2x128x256xf32>) -> tensor<2x128x256xf32>
  %2 = nn.layer_norm %x weight %g {eps = 1.000000e-06 : f64} : (tensor<2x128x256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.layer_norm %[[ARG0]] weight %[[ARG1]] {eps = 9.9999999999999995E-7 : f64} : (tensor<2x128x256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
  %3 = nn.layer_norm %x weight %g2 bias %g2 {normalized_rank = 2 : i64} : (tensor<2x128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<2x128x256xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.layer_norm %[[ARG0]] weight %[[ARG3]] bias %[[ARG3]] {normalized_rank = 2 : i64} : (tensor<2x128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<2x128x256xf32>
  %4 = nn.layer_norm %x bias %b : (tensor<2x128x256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.layer_norm %[[ARG0]] bias %[[ARG2]] : (tensor<2x128x256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
  return
  // CHECK-NEXT: return
}

func.func @rms_norm(%x: tensor<1x16x4096xf32>, %g: tensor<4096xf32>, %g2: tensor<16x4096xf32>) {
  // CHECK-LABEL: func.func @rms_norm(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<1x16x4096xf32>, %[[ARG1:arg[0-9]+]]: tensor<4096xf32>, %[[ARG2:arg[0-9]+]]: tensor<16x4096xf32>) {
  %0 = nn.rms_norm %x weight %g : (tensor<1x16x4096xf32>, tensor<4096xf32>) -> tensor<1x16x4096xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.rms_norm %[[ARG0]] weight %[[ARG1]] : (tensor<1x16x4096xf32>, tensor<4096xf32>) -> tensor<1x16x4096xf32>
  %1 = nn.rms_norm %x : (tensor<1x16x4096xf32>) -> tensor<1x16x4096xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.rms_norm %[[ARG0]] : (tensor<1x16x4096xf32>) -> tensor<1x16x4096xf32>
  %2 = nn.rms_norm %x weight %g2 {normalized_rank = 2 : i64, eps = 1.000000e-05 : f64} : (tensor<1x16x4096xf32>, tensor<16x4096xf32>) -> tensor<1x16x4096xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.rms_norm %[[ARG0]] weight %[[ARG2]] {eps = 1.000000e-05 : f64, normalized_rank = 2 : i64} : (tensor<1x16x4096xf32>, tensor<16x4096xf32>) -> tensor<1x16x4096xf32>
  return
  // CHECK-NEXT: return
}

func.func @group_norm(%x: tensor<2x64x8x8xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>, %x3: tensor<2x64x10xf32>) {
  // CHECK-LABEL: func.func @group_norm(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x64x8x8xf32>, %[[ARG1:arg[0-9]+]]: tensor<64xf32>, %[[ARG2:arg[0-9]+]]: tensor<64xf32>, %[[ARG3:arg[0-9]+]]: tensor<2x64x10xf32>) {
  %0 = nn.group_norm %x weight %g bias %b {num_groups = 32 : i64} : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.group_norm %[[ARG0]] weight %[[ARG1]] bias %[[ARG2]] {num_groups = 32 : i64} : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  %1 = nn.group_norm %x {num_groups = 1 : i64, eps = 1.000000e-06 : f64} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.group_norm %[[ARG0]] {eps = 9.9999999999999995E-7 : f64, num_groups = 1 : i64} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  %2 = nn.group_norm %x3 weight %g bias %b {num_groups = 64 : i64} : (tensor<2x64x10xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x10xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.group_norm %[[ARG3]] weight %[[ARG1]] bias %[[ARG2]] {num_groups = 64 : i64} : (tensor<2x64x10xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x10xf32>
  %3 = nn.group_norm %x weight %g bias %b {num_groups = 64 : i64, instance} : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.group_norm %[[ARG0]] weight %[[ARG1]] bias %[[ARG2]] {instance, num_groups = 64 : i64} : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  return
  // CHECK-NEXT: return
}

func.func @activations(%x: tensor<2x64x56x56xf32>, %h: tensor<2x128x1024xf16>) {
  // CHECK-LABEL: func.func @activations(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x64x56x56xf32>, %[[ARG1:arg[0-9]+]]: tensor<2x128x1024xf16>) {
  %0 = nn.relu %x : tensor<2x64x56x56xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.relu %[[ARG0]] : tensor<2x64x56x56xf32>
  %1 = nn.relu %x {inplace} : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.relu %[[ARG0]] {inplace} : tensor<2x64x56x56xf32>
  %2 = nn.relu6 %x : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.relu6 %[[ARG0]] : tensor<2x64x56x56xf32>
  %3 = nn.relu6 %x {inplace} : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.relu6 %[[ARG0]] {inplace} : tensor<2x64x56x56xf32>
  %4 = nn.silu %x : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.silu %[[ARG0]] : tensor<2x64x56x56xf32>
  %5 = nn.silu %x {inplace} : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.silu %[[ARG0]] {inplace} : tensor<2x64x56x56xf32>
  %6 = nn.hardswish %x : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.hardswish %[[ARG0]] : tensor<2x64x56x56xf32>
  %7 = nn.hardswish %x {inplace} : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V7:[0-9]+]] = nn.hardswish %[[ARG0]] {inplace} : tensor<2x64x56x56xf32>
  %8 = nn.hardsigmoid %x : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V8:[0-9]+]] = nn.hardsigmoid %[[ARG0]] : tensor<2x64x56x56xf32>
  %9 = nn.hardsigmoid %x {inplace} : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V9:[0-9]+]] = nn.hardsigmoid %[[ARG0]] {inplace} : tensor<2x64x56x56xf32>
  %10 = nn.gelu %h : tensor<2x128x1024xf16>
  // CHECK-NEXT: %[[V10:[0-9]+]] = nn.gelu %[[ARG1]] : tensor<2x128x1024xf16>
  %11 = nn.gelu %h {approximate = #nn<approximate none>} : tensor<2x128x1024xf16>
  // CHECK-NEXT: %[[V11:[0-9]+]] = nn.gelu %[[ARG1]] : tensor<2x128x1024xf16>
  %12 = nn.gelu %h {approximate = #nn<approximate tanh>} : tensor<2x128x1024xf16>
  // CHECK-NEXT: %[[V12:[0-9]+]] = nn.gelu %[[ARG1]] {approximate = #nn<approximate tanh>} : tensor<2x128x1024xf16>
  %13 = nn.sigmoid %x : tensor<2x64x56x56xf32>
  // CHECK-NEXT: %[[V13:[0-9]+]] = nn.sigmoid %[[ARG0]] : tensor<2x64x56x56xf32>
  %14 = nn.tanh %h : tensor<2x128x1024xf16>
  // CHECK-NEXT: %[[V14:[0-9]+]] = nn.tanh %[[ARG1]] : tensor<2x128x1024xf16>
  return
  // CHECK-NEXT: return
}

// The activations with coefficients print them only when they differ from
// PyTorch's defaults (leaky_relu 0.01; elu 1, 1, 1; softplus 1, 20).
func.func @coefficient_activations(%x: tensor<2x8xf32>) {
  // CHECK-LABEL: func.func @coefficient_activations(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x8xf32>) {
  %0 = nn.leaky_relu %x : tensor<2x8xf32>
  // CHECK:      nn.leaky_relu %[[ARG0]] : tensor<2x8xf32>
  %1 = nn.leaky_relu %x {negative_slope = 0.2 : f64, inplace} : tensor<2x8xf32>
  // CHECK-NEXT: nn.leaky_relu %[[ARG0]] {inplace, negative_slope = 2.000000e-01 : f64} : tensor<2x8xf32>
  %2 = nn.elu %x {alpha = 1.0 : f64} : tensor<2x8xf32>
  // CHECK-NEXT: nn.elu %[[ARG0]] : tensor<2x8xf32>
  %3 = nn.elu %x {alpha = 0.5 : f64, input_scale = 2.0 : f64} : tensor<2x8xf32>
  // CHECK-NEXT: nn.elu %[[ARG0]] {alpha = 5.000000e-01 : f64, input_scale = 2.000000e+00 : f64} : tensor<2x8xf32>
  %4 = nn.softplus %x {threshold = 20.0 : f64} : tensor<2x8xf32>
  // CHECK-NEXT: nn.softplus %[[ARG0]] : tensor<2x8xf32>
  %5 = nn.softplus %x {beta = 2.0 : f64} : tensor<2x8xf32>
  // CHECK-NEXT: nn.softplus %[[ARG0]] {beta = 2.000000e+00 : f64} : tensor<2x8xf32>
  %6 = nn.mish %x {inplace} : tensor<2x8xf32>
  // CHECK-NEXT: nn.mish %[[ARG0]] {inplace} : tensor<2x8xf32>
  return
  // CHECK-NEXT: return
}

// nn.prelu: a slope per channel (dimension 1), one for all, and one for a
// rank-1 input.
func.func @prelu(%x: tensor<2x3x4x4xf32>, %w: tensor<3xf32>, %w1: tensor<1xf32>,
                 %v: tensor<5xf32>) {
  // CHECK-LABEL: func.func @prelu(
  // CHECK-SAME:    %[[X:arg[0-9]+]]: tensor<2x3x4x4xf32>, %[[W:arg[0-9]+]]: tensor<3xf32>, %[[W1:arg[0-9]+]]: tensor<1xf32>, %[[V:arg[0-9]+]]: tensor<5xf32>) {
  %0 = nn.prelu %x, %w : (tensor<2x3x4x4xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  // CHECK:      nn.prelu %[[X]], %[[W]] : (tensor<2x3x4x4xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %1 = nn.prelu %x, %w1 : (tensor<2x3x4x4xf32>, tensor<1xf32>) -> tensor<2x3x4x4xf32>
  // CHECK-NEXT: nn.prelu %[[X]], %[[W1]] : (tensor<2x3x4x4xf32>, tensor<1xf32>) -> tensor<2x3x4x4xf32>
  %2 = nn.prelu %v, %w1 : (tensor<5xf32>, tensor<1xf32>) -> tensor<5xf32>
  // CHECK-NEXT: nn.prelu %[[V]], %[[W1]] : (tensor<5xf32>, tensor<1xf32>) -> tensor<5xf32>
  return
  // CHECK-NEXT: return
}

func.func @softmax(%s: tensor<2x8x128x128xf32>, %l: tensor<2x10xf32>) {
  // CHECK-LABEL: func.func @softmax(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x8x128x128xf32>, %[[ARG1:arg[0-9]+]]: tensor<2x10xf32>) {
  %0 = nn.softmax %s {dim = -1 : i64} : tensor<2x8x128x128xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.softmax %[[ARG0]] {dim = -1 : i64} : tensor<2x8x128x128xf32>
  %1 = nn.softmax %s {dim = 3 : i64} : tensor<2x8x128x128xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.softmax %[[ARG0]] {dim = 3 : i64} : tensor<2x8x128x128xf32>
  %2 = nn.softmax %l {dim = -2 : i64} : tensor<2x10xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.softmax %[[ARG1]] {dim = -2 : i64} : tensor<2x10xf32>
  %3 = nn.log_softmax %l {dim = 1 : i64} : tensor<2x10xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.log_softmax %[[ARG1]] {dim = 1 : i64} : tensor<2x10xf32>
  %4 = nn.log_softmax %l {dim = -1 : i64} : tensor<2x10xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.log_softmax %[[ARG1]] {dim = -1 : i64} : tensor<2x10xf32>
  return
  // CHECK-NEXT: return
}

func.func @dropout(%x: tensor<2x128x768xf32>) {
  // CHECK-LABEL: func.func @dropout(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x128x768xf32>) {
  %0 = nn.dropout %x {p = 1.000000e-01 : f64} : tensor<2x128x768xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.dropout %[[ARG0]] {p = 1.000000e-01 : f64} : tensor<2x128x768xf32>
  %1 = nn.dropout %x {inplace, p = 5.000000e-01 : f64} : tensor<2x128x768xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.dropout %[[ARG0]] {inplace, p = 5.000000e-01 : f64} : tensor<2x128x768xf32>
  %2 = nn.dropout %x {p = 0.000000e+00 : f64} : tensor<2x128x768xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.dropout %[[ARG0]] {p = 0.000000e+00 : f64} : tensor<2x128x768xf32>
  %3 = nn.dropout %x {p = 1.000000e+00 : f64} : tensor<2x128x768xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.dropout %[[ARG0]] {p = 1.000000e+00 : f64} : tensor<2x128x768xf32>
  return
  // CHECK-NEXT: return
}

func.func @binary(%a: tensor<4x8xf32>, %b: tensor<8xf32>, %c: tensor<4x1xf32>, %d: tensor<1xf32>,
                  %e: tensor<1x8xf32>, %s: tensor<f32>, %x: tensor<2x3x4x8xf32>) {
  // CHECK-LABEL: func.func @binary(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<4x8xf32>, %[[ARG1:arg[0-9]+]]: tensor<8xf32>, %[[ARG2:arg[0-9]+]]: tensor<4x1xf32>, %[[ARG3:arg[0-9]+]]: tensor<1xf32>, %[[ARG4:arg[0-9]+]]: tensor<1x8xf32>, %[[ARG5:arg[0-9]+]]: tensor<f32>, %[[ARG6:arg[0-9]+]]: tensor<2x3x4x8xf32>) {
  %0 = nn.add %a, %a : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.add %[[ARG0]], %[[ARG0]] : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = nn.add %a, %a {inplace} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.add %[[ARG0]], %[[ARG0]] {inplace} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = nn.add %b, %a : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.add %[[ARG1]], %[[ARG0]] : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = nn.add %c, %e : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.add %[[ARG2]], %[[ARG4]] : (tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %4 = nn.add %a, %c {inplace} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.add %[[ARG0]], %[[ARG2]] {inplace} : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %5 = nn.sub %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.sub %[[ARG0]], %[[ARG1]] : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %6 = nn.sub %a, %s {inplace} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.sub %[[ARG0]], %[[ARG5]] {inplace} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %7 = nn.mul %a, %c : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V7:[0-9]+]] = nn.mul %[[ARG0]], %[[ARG2]] : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %8 = nn.mul %x, %a {inplace} : (tensor<2x3x4x8xf32>, tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
  // CHECK-NEXT: %[[V8:[0-9]+]] = nn.mul %[[ARG6]], %[[ARG0]] {inplace} : (tensor<2x3x4x8xf32>, tensor<4x8xf32>) -> tensor<2x3x4x8xf32>
  %9 = nn.mul %s, %s : (tensor<f32>, tensor<f32>) -> tensor<f32>
  // CHECK-NEXT: %[[V9:[0-9]+]] = nn.mul %[[ARG5]], %[[ARG5]] : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %10 = nn.div %a, %d : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V10:[0-9]+]] = nn.div %[[ARG0]], %[[ARG3]] : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4x8xf32>
  %11 = nn.div %a, %b {inplace} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  // CHECK-NEXT: %[[V11:[0-9]+]] = nn.div %[[ARG0]], %[[ARG1]] {inplace} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %12 = nn.div %c, %x : (tensor<4x1xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  // CHECK-NEXT: %[[V12:[0-9]+]] = nn.div %[[ARG2]], %[[ARG6]] : (tensor<4x1xf32>, tensor<2x3x4x8xf32>) -> tensor<2x3x4x8xf32>
  return
  // CHECK-NEXT: return
}

func.func @pooling(%x: tensor<2x64x112x112xf32>, %y: tensor<1x1x5x5xf32>, %z: tensor<2x64x8x8xf32>, %w: tensor<2x512x14x14xf32>) {
  // CHECK-LABEL: func.func @pooling(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x64x112x112xf32>, %[[ARG1:arg[0-9]+]]: tensor<1x1x5x5xf32>, %[[ARG2:arg[0-9]+]]: tensor<2x64x8x8xf32>, %[[ARG3:arg[0-9]+]]: tensor<2x512x14x14xf32>) {
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 3, 3>, strides = array<i64: 2, 2>, padding = array<i64: 1, 1>} : (tensor<2x64x112x112xf32>) -> tensor<2x64x56x56xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.max_pool2d %[[ARG0]] {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x64x112x112xf32>) -> tensor<2x64x56x56xf32>
  %1 = nn.max_pool2d %y {kernel_size = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.max_pool2d %[[ARG1]] {kernel_size = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x2x2xf32>
  %2 = nn.max_pool2d %y {kernel_size = array<i64: 2, 2>, ceil_mode} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.max_pool2d %[[ARG1]] {ceil_mode, kernel_size = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %3 = nn.max_pool2d %y {kernel_size = array<i64: 2, 2>, strides = array<i64: 1, 1>, dilation = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.max_pool2d %[[ARG1]] {dilation = array<i64: 2, 2>, kernel_size = array<i64: 2, 2>, strides = array<i64: 1, 1>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %4 = nn.max_pool2d %y {kernel_size = array<i64: 3, 2>, strides = array<i64: 2, 3>, padding = array<i64: 1, 1>, ceil_mode} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x2xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.max_pool2d %[[ARG1]] {ceil_mode, kernel_size = array<i64: 3, 2>, padding = array<i64: 1, 1>, strides = array<i64: 2, 3>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x2xf32>
  %5 = nn.avg_pool2d %z {kernel_size = array<i64: 2, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.avg_pool2d %[[ARG2]] {kernel_size = array<i64: 2, 2>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x4x4xf32>
  %6 = nn.avg_pool2d %z {kernel_size = array<i64: 3, 3>, strides = array<i64: 1, 1>, padding = array<i64: 1, 1>, count_include_pad = false} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.avg_pool2d %[[ARG2]] {count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  %7 = nn.avg_pool2d %y {kernel_size = array<i64: 2, 2>, ceil_mode} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  // CHECK-NEXT: %[[V7:[0-9]+]] = nn.avg_pool2d %[[ARG1]] {ceil_mode, kernel_size = array<i64: 2, 2>} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  %8 = nn.adaptive_avg_pool2d %w {output_size = array<i64: 1, 1>} : (tensor<2x512x14x14xf32>) -> tensor<2x512x1x1xf32>
  // CHECK-NEXT: %[[V8:[0-9]+]] = nn.adaptive_avg_pool2d %[[ARG3]] {output_size = array<i64: 1, 1>} : (tensor<2x512x14x14xf32>) -> tensor<2x512x1x1xf32>
  %9 = nn.adaptive_avg_pool2d %w {output_size = array<i64: 7, 7>} : (tensor<2x512x14x14xf32>) -> tensor<2x512x7x7xf32>
  // CHECK-NEXT: %[[V9:[0-9]+]] = nn.adaptive_avg_pool2d %[[ARG3]] {output_size = array<i64: 7, 7>} : (tensor<2x512x14x14xf32>) -> tensor<2x512x7x7xf32>
  return
  // CHECK-NEXT: return
}

func.func @embedding(%w: tensor<50257x768xf32>, %ids: tensor<2x1024xi64>, %ids32: tensor<16xi32>) {
  // CHECK-LABEL: func.func @embedding(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<50257x768xf32>, %[[ARG1:arg[0-9]+]]: tensor<2x1024xi64>, %[[ARG2:arg[0-9]+]]: tensor<16xi32>) {
  %0 = nn.embedding %w, %ids : (tensor<50257x768xf32>, tensor<2x1024xi64>) -> tensor<2x1024x768xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.embedding %[[ARG0]], %[[ARG1]] : (tensor<50257x768xf32>, tensor<2x1024xi64>) -> tensor<2x1024x768xf32>
  %1 = nn.embedding %w, %ids32 {padding_idx = 0 : i64} : (tensor<50257x768xf32>, tensor<16xi32>) -> tensor<16x768xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.embedding %[[ARG0]], %[[ARG2]] {padding_idx = 0 : i64} : (tensor<50257x768xf32>, tensor<16xi32>) -> tensor<16x768xf32>
  %2 = nn.embedding %w, %ids {padding_idx = -1 : i64} : (tensor<50257x768xf32>, tensor<2x1024xi64>) -> tensor<2x1024x768xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.embedding %[[ARG0]], %[[ARG1]] {padding_idx = -1 : i64} : (tensor<50257x768xf32>, tensor<2x1024xi64>) -> tensor<2x1024x768xf32>
  return
  // CHECK-NEXT: return
}

func.func @attention(%q: tensor<2x12x128x64xf32>, %k: tensor<2x12x256x64xf32>, %v: tensor<2x12x256x32xf32>,
                     %mask: tensor<128x256xi1>, %fmask: tensor<2x1x128x256xf32>,
                     %q3: tensor<4x16x8xf16>) {
  // CHECK-LABEL: func.func @attention(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x12x128x64xf32>, %[[ARG1:arg[0-9]+]]: tensor<2x12x256x64xf32>, %[[ARG2:arg[0-9]+]]: tensor<2x12x256x32xf32>, %[[ARG3:arg[0-9]+]]: tensor<128x256xi1>, %[[ARG4:arg[0-9]+]]: tensor<2x1x128x256xf32>, %[[ARG5:arg[0-9]+]]: tensor<4x16x8xf16>) {
  %0 = nn.scaled_dot_product_attention %q, %k, %v : (tensor<2x12x128x64xf32>, tensor<2x12x256x64xf32>, tensor<2x12x256x32xf32>) -> tensor<2x12x128x32xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.scaled_dot_product_attention %[[ARG0]], %[[ARG1]], %[[ARG2]] : (tensor<2x12x128x64xf32>, tensor<2x12x256x64xf32>, tensor<2x12x256x32xf32>) -> tensor<2x12x128x32xf32>
  %1 = nn.scaled_dot_product_attention %q, %q, %q {causal, backend = #nn<backend flash>} : (tensor<2x12x128x64xf32>, tensor<2x12x128x64xf32>, tensor<2x12x128x64xf32>) -> tensor<2x12x128x64xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.scaled_dot_product_attention %[[ARG0]], %[[ARG0]], %[[ARG0]] {causal} : (tensor<2x12x128x64xf32>, tensor<2x12x128x64xf32>, tensor<2x12x128x64xf32>) -> tensor<2x12x128x64xf32>
  %2 = nn.scaled_dot_product_attention %q, %k, %v mask %mask {backend = #nn<backend efficient>} : (tensor<2x12x128x64xf32>, tensor<2x12x256x64xf32>, tensor<2x12x256x32xf32>, tensor<128x256xi1>) -> tensor<2x12x128x32xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.scaled_dot_product_attention %[[ARG0]], %[[ARG1]], %[[ARG2]] mask %[[ARG3]] {backend = #nn<backend efficient>} : (tensor<2x12x128x64xf32>, tensor<2x12x256x64xf32>, tensor<2x12x256x32xf32>, tensor<128x256xi1>) -> tensor<2x12x128x32xf32>
  %3 = nn.scaled_dot_product_attention %q, %k, %v mask %fmask {backend = #nn<backend math>, scale = 1.250000e-01 : f64} : (tensor<2x12x128x64xf32>, tensor<2x12x256x64xf32>, tensor<2x12x256x32xf32>, tensor<2x1x128x256xf32>) -> tensor<2x12x128x32xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.scaled_dot_product_attention %[[ARG0]], %[[ARG1]], %[[ARG2]] mask %[[ARG4]] {backend = #nn<backend math>, scale = 1.250000e-01 : f64} : (tensor<2x12x128x64xf32>, tensor<2x12x256x64xf32>, tensor<2x12x256x32xf32>, tensor<2x1x128x256xf32>) -> tensor<2x12x128x32xf32>
  %4 = nn.scaled_dot_product_attention %q3, %q3, %q3 {causal, backend = #nn<backend math>} : (tensor<4x16x8xf16>, tensor<4x16x8xf16>, tensor<4x16x8xf16>) -> tensor<4x16x8xf16>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.scaled_dot_product_attention %[[ARG5]], %[[ARG5]], %[[ARG5]] {backend = #nn<backend math>, causal} : (tensor<4x16x8xf16>, tensor<4x16x8xf16>, tensor<4x16x8xf16>) -> tensor<4x16x8xf16>
  return
  // CHECK-NEXT: return
}

func.func @concat(%a: tensor<2x32x8x8xf32>, %b: tensor<2x16x8x8xf32>, %i: tensor<3xi64>, %j: tensor<5xi64>) {
  // CHECK-LABEL: func.func @concat(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x32x8x8xf32>, %[[ARG1:arg[0-9]+]]: tensor<2x16x8x8xf32>, %[[ARG2:arg[0-9]+]]: tensor<3xi64>, %[[ARG3:arg[0-9]+]]: tensor<5xi64>) {
  %0 = nn.concat %a, %a {dim = 1 : i64} : (tensor<2x32x8x8xf32>, tensor<2x32x8x8xf32>) -> tensor<2x64x8x8xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.concat %[[ARG0]], %[[ARG0]] {dim = 1 : i64} : (tensor<2x32x8x8xf32>, tensor<2x32x8x8xf32>) -> tensor<2x64x8x8xf32>
  %1 = nn.concat %a, %b, %a {dim = -3 : i64} : (tensor<2x32x8x8xf32>, tensor<2x16x8x8xf32>, tensor<2x32x8x8xf32>) -> tensor<2x80x8x8xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.concat %[[ARG0]], %[[ARG1]], %[[ARG0]] {dim = -3 : i64} : (tensor<2x32x8x8xf32>, tensor<2x16x8x8xf32>, tensor<2x32x8x8xf32>) -> tensor<2x80x8x8xf32>
  %2 = nn.concat %a {dim = 0 : i64} : (tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.concat %[[ARG0]] {dim = 0 : i64} : (tensor<2x32x8x8xf32>) -> tensor<2x32x8x8xf32>
  %3 = nn.concat %i, %j {dim = 0 : i64} : (tensor<3xi64>, tensor<5xi64>) -> tensor<8xi64>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.concat %[[ARG2]], %[[ARG3]] {dim = 0 : i64} : (tensor<3xi64>, tensor<5xi64>) -> tensor<8xi64>
  return
  // CHECK-NEXT: return
}

func.func @views(%x: tensor<2x512x1x1xf32>, %t: tensor<2x128x8x32xf32>, %p: tensor<2x196x768xf32>,
                 %c: tensor<2x197x768xf32>, %e: tensor<1x1x768xf32>, %ids: tensor<1x16xi64>) {
  // CHECK-LABEL: func.func @views(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x512x1x1xf32>, %[[ARG1:arg[0-9]+]]: tensor<2x128x8x32xf32>, %[[ARG2:arg[0-9]+]]: tensor<2x196x768xf32>, %[[ARG3:arg[0-9]+]]: tensor<2x197x768xf32>, %[[ARG4:arg[0-9]+]]: tensor<1x1x768xf32>, %[[ARG5:arg[0-9]+]]: tensor<1x16xi64>) {
  %0 = nn.reshape %x : tensor<2x512x1x1xf32> -> tensor<2x512xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.reshape %[[ARG0]] : tensor<2x512x1x1xf32> -> tensor<2x512xf32>
  %1 = nn.reshape %t : tensor<2x128x8x32xf32> -> tensor<2x128x256xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.reshape %[[ARG1]] : tensor<2x128x8x32xf32> -> tensor<2x128x256xf32>
  %2 = nn.reshape %ids : tensor<1x16xi64> -> tensor<16xi64>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.reshape %[[ARG5]] : tensor<1x16xi64> -> tensor<16xi64>
  %3 = nn.flatten %x : (tensor<2x512x1x1xf32>) -> tensor<2x512xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.flatten %[[ARG0]] : (tensor<2x512x1x1xf32>) -> tensor<2x512xf32>
  %4 = nn.flatten %x {start_dim = 1 : i64} : (tensor<2x512x1x1xf32>) -> tensor<2x512xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.flatten %[[ARG0]] : (tensor<2x512x1x1xf32>) -> tensor<2x512xf32>
  %5 = nn.flatten %t {start_dim = 0 : i64} : (tensor<2x128x8x32xf32>) -> tensor<65536xf32>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.flatten %[[ARG1]] {start_dim = 0 : i64} : (tensor<2x128x8x32xf32>) -> tensor<65536xf32>
  %6 = nn.flatten %t {start_dim = 2 : i64, end_dim = 3 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x256xf32>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.flatten %[[ARG1]] {end_dim = 3 : i64, start_dim = 2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x256xf32>
  %7 = nn.flatten %t {start_dim = -3 : i64, end_dim = -2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x1024x32xf32>
  // CHECK-NEXT: %[[V7:[0-9]+]] = nn.flatten %[[ARG1]] {end_dim = -2 : i64, start_dim = -3 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x1024x32xf32>
  %8 = nn.transpose %t {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x8x128x32xf32>
  // CHECK-NEXT: %[[V8:[0-9]+]] = nn.transpose %[[ARG1]] {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x8x128x32xf32>
  %9 = nn.transpose %t {dim0 = -1 : i64, dim1 = -2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x32x8xf32>
  // CHECK-NEXT: %[[V9:[0-9]+]] = nn.transpose %[[ARG1]] {dim0 = -1 : i64, dim1 = -2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x32x8xf32>
  %10 = nn.transpose %t {dim0 = 1 : i64, dim1 = 1 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  // CHECK-NEXT: %[[V10:[0-9]+]] = nn.transpose %[[ARG1]] {dim0 = 1 : i64, dim1 = 1 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  %11 = nn.permute %p {dims = array<i64: 0, 2, 1>} : (tensor<2x196x768xf32>) -> tensor<2x768x196xf32>
  // CHECK-NEXT: %[[V11:[0-9]+]] = nn.permute %[[ARG2]] {dims = array<i64: 0, 2, 1>} : (tensor<2x196x768xf32>) -> tensor<2x768x196xf32>
  %12 = nn.permute %t {dims = array<i64: 0, -2, 1, -1>} : (tensor<2x128x8x32xf32>) -> tensor<2x8x128x32xf32>
  // CHECK-NEXT: %[[V12:[0-9]+]] = nn.permute %[[ARG1]] {dims = array<i64: 0, -2, 1, -1>} : (tensor<2x128x8x32xf32>) -> tensor<2x8x128x32xf32>
  %13 = nn.slice %c {dim = 1 : i64, start = 0 : i64, end = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<2x1x768xf32>
  // CHECK-NEXT: %[[V13:[0-9]+]] = nn.slice %[[ARG3]] {dim = 1 : i64, end = 1 : i64, start = 0 : i64} : (tensor<2x197x768xf32>) -> tensor<2x1x768xf32>
  %14 = nn.slice %c {dim = 1 : i64, start = 1 : i64, end = 197 : i64, step = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<2x196x768xf32>
  // CHECK-NEXT: %[[V14:[0-9]+]] = nn.slice %[[ARG3]] {dim = 1 : i64, end = 197 : i64, start = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<2x196x768xf32>
  %15 = nn.slice %c {dim = -1 : i64, start = 0 : i64, end = 768 : i64, step = 2 : i64} : (tensor<2x197x768xf32>) -> tensor<2x197x384xf32>
  // CHECK-NEXT: %[[V15:[0-9]+]] = nn.slice %[[ARG3]] {dim = -1 : i64, end = 768 : i64, start = 0 : i64, step = 2 : i64} : (tensor<2x197x768xf32>) -> tensor<2x197x384xf32>
  %16 = nn.slice %c {dim = 1 : i64, start = -10 : i64, end = 9223372036854775807 : i64, step = 3 : i64} : (tensor<2x197x768xf32>) -> tensor<2x4x768xf32>
  // CHECK-NEXT: %[[V16:[0-9]+]] = nn.slice %[[ARG3]] {dim = 1 : i64, end = 9223372036854775807 : i64, start = -10 : i64, step = 3 : i64} : (tensor<2x197x768xf32>) -> tensor<2x4x768xf32>
  %17 = nn.slice %c {dim = 0 : i64, start = 1 : i64, end = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<0x197x768xf32>
  // CHECK-NEXT: %[[V17:[0-9]+]] = nn.slice %[[ARG3]] {dim = 0 : i64, end = 1 : i64, start = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<0x197x768xf32>
  %18 = nn.expand %e : tensor<1x1x768xf32> -> tensor<2x1x768xf32>
  // CHECK-NEXT: %[[V18:[0-9]+]] = nn.expand %[[ARG4]] : tensor<1x1x768xf32> -> tensor<2x1x768xf32>
  %19 = nn.expand %e : tensor<1x1x768xf32> -> tensor<4x2x197x768xf32>
  // CHECK-NEXT: %[[V19:[0-9]+]] = nn.expand %[[ARG4]] : tensor<1x1x768xf32> -> tensor<4x2x197x768xf32>
  %20 = nn.expand %ids : tensor<1x16xi64> -> tensor<1x16xi64>
  // CHECK-NEXT: %[[V20:[0-9]+]] = nn.expand %[[ARG5]] : tensor<1x16xi64> -> tensor<1x16xi64>
  %21:3 = nn.split %c {dim = 2 : i64, sizes = array<i64: 256, 256, 256>} : (tensor<2x197x768xf32>) -> (tensor<2x197x256xf32>, tensor<2x197x256xf32>, tensor<2x197x256xf32>)
  // CHECK-NEXT: %[[V21:[0-9]+]]:3 = nn.split %[[ARG3]] {dim = 2 : i64, sizes = array<i64: 256, 256, 256>} : (tensor<2x197x768xf32>) -> (tensor<2x197x256xf32>, tensor<2x197x256xf32>, tensor<2x197x256xf32>)
  %22:2 = nn.split %c {dim = 0 : i64, sizes = array<i64: 1, 1>, squeeze} : (tensor<2x197x768xf32>) -> (tensor<197x768xf32>, tensor<197x768xf32>)
  // CHECK-NEXT: %[[V22:[0-9]+]]:2 = nn.split %[[ARG3]] {dim = 0 : i64, sizes = array<i64: 1, 1>, squeeze} : (tensor<2x197x768xf32>) -> (tensor<197x768xf32>, tensor<197x768xf32>)
  return
  // CHECK-NEXT: return
}

func.func @losses(%logits: tensor<2x10xf32>, %target: tensor<2xi64>, %seg: tensor<2x21x8x8xf32>,
                  %segt: tensor<2x8x8xi64>, %y: tensor<2x10xf32>) {
  // CHECK-LABEL: func.func @losses(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<2x10xf32>, %[[ARG1:arg[0-9]+]]: tensor<2xi64>, %[[ARG2:arg[0-9]+]]: tensor<2x21x8x8xf32>, %[[ARG3:arg[0-9]+]]: tensor<2x8x8xi64>, %[[ARG4:arg[0-9]+]]: tensor<2x10xf32>) {
  %0 = nn.cross_entropy %logits, %target : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  // CHECK:      %[[V0:[0-9]+]] = nn.cross_entropy %[[ARG0]], %[[ARG1]] : (tensor<2x10xf32>, tensor<2xi64>) -> tensor<f32>
  %1 = nn.cross_entropy %seg, %segt : (tensor<2x21x8x8xf32>, tensor<2x8x8xi64>) -> tensor<f32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.cross_entropy %[[ARG2]], %[[ARG3]] : (tensor<2x21x8x8xf32>, tensor<2x8x8xi64>) -> tensor<f32>
  %2 = nn.mse_loss %y, %logits : (tensor<2x10xf32>, tensor<2x10xf32>) -> tensor<f32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.mse_loss %[[ARG4]], %[[ARG0]] : (tensor<2x10xf32>, tensor<2x10xf32>) -> tensor<f32>
  return
  // CHECK-NEXT: return
}

func.func @params() {
  // CHECK-LABEL: func.func @params(
  // CHECK-SAME:    ) {
  %0 = nn.param "layer1.0.conv1.weight" : tensor<64x64x3x3xf32>
  // CHECK:      %[[V0:[0-9]+]] = nn.param "layer1.0.conv1.weight" : tensor<64x64x3x3xf32>
  %1 = nn.param "fc.weight" {trainable = false} : tensor<10x512xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.param "fc.weight" {trainable = false} : tensor<10x512xf32>
  %2 = nn.param "fc.bias" {trainable = true} : tensor<10xf32>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.param "fc.bias" : tensor<10xf32>
  %3 = nn.param "emb.weight" : tensor<100x16xbf16>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.param "emb.weight" : tensor<100x16xbf16>
  %4 = nn.buffer "bn1.running_mean" : tensor<64xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.buffer "bn1.running_mean" : tensor<64xf32>
  %5 = nn.buffer "bn1.num_batches_tracked" : tensor<i64>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.buffer "bn1.num_batches_tracked" : tensor<i64>
  %6 = nn.buffer "causal_mask" : tensor<1x1x128x128xi1>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.buffer "causal_mask" : tensor<1x1x128x128xi1>
  return
  // CHECK-NEXT: return
}

func.func @step(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %gy: tensor<1x4x6x6xf32>,
                %y: tensor<2x64x56x56xf32>, %g0: tensor<4x8xf32>, %g1: tensor<8xf32>,
                %p: tensor<4xf32>, %gp: tensor<4xf32>, %q: tensor<2x3xf16>, %gq: tensor<2x3xf16>) {
  // CHECK-LABEL: func.func @step(
  // CHECK-SAME:    %[[ARG0:arg[0-9]+]]: tensor<1x3x8x8xf32>, %[[ARG1:arg[0-9]+]]: tensor<4x3x3x3xf32>, %[[ARG2:arg[0-9]+]]: tensor<1x4x6x6xf32>, %[[ARG3:arg[0-9]+]]: tensor<2x64x56x56xf32>, %[[ARG4:arg[0-9]+]]: tensor<4x8xf32>, %[[ARG5:arg[0-9]+]]: tensor<8xf32>, %[[ARG6:arg[0-9]+]]: tensor<4xf32>, %[[ARG7:arg[0-9]+]]: tensor<4xf32>, %[[ARG8:arg[0-9]+]]: tensor<2x3xf16>, %[[ARG9:arg[0-9]+]]: tensor<2x3xf16>) {
  %idx = nn.saved "indices" of "nn.max_pool2d"(%y) {forward_attrs = {kernel_size = array<i64: 2, 2>}} : (tensor<2x64x56x56xf32>) -> tensor<2x64x56x56xi64>
  // CHECK:      %[[V0:[0-9]+]] = nn.saved "indices" of "nn.max_pool2d"(%[[ARG3]]) {forward_attrs = {kernel_size = array<i64: 2, 2>}} : (tensor<2x64x56x56xf32>) -> tensor<2x64x56x56xi64>
  %mean = nn.saved "save_mean" of "nn.batch_norm"(%y, %y) {forward_attrs = {}} : (tensor<2x64x56x56xf32>, tensor<2x64x56x56xf32>) -> tensor<64xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.saved "save_mean" of "nn.batch_norm"(%[[ARG3]], %[[ARG3]]) {forward_attrs = {}} : (tensor<2x64x56x56xf32>, tensor<2x64x56x56xf32>) -> tensor<64xf32>
  %gx, %gw = nn.backward "nn.conv2d" saved(%x, %w) grads(%gy) {forward_attrs = {strides = array<i64: 1, 1>}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<operand 0>, #nn.saved<operand 1>], grad_operands = array<i64: 0, 1>, param_grads = array<i1: false, true>, flop_counts = array<i64: 10, 20, 20>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x6x6xf32>) -> (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)
  // CHECK-NEXT: %[[V2:[0-9]+]]:2 = nn.backward "nn.conv2d" saved(%[[ARG0]], %[[ARG1]]) grads(%[[ARG2]]) {flop_counts = array<i64: 10, 20, 20>, forward_attrs = {strides = array<i64: 1, 1>}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, grad_operands = array<i64: 0, 1>, param_grads = array<i1: false, true>, saved_roles = [#nn.saved<operand 0>, #nn.saved<operand 1>]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<1x4x6x6xf32>) -> (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>)
  %gw2 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {strides = array<i64: 1, 1>}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<operand 0>], grad_operands = array<i64: 1>, param_grads = array<i1: true>, flop_counts = array<i64: 5, 10, 10>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.backward "nn.conv2d" saved(%[[ARG0]]) grads(%[[ARG2]]) {flop_counts = array<i64: 5, 10, 10>, forward_attrs = {strides = array<i64: 1, 1>}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, grad_operands = array<i64: 1>, param_grads = array<i1: true>, saved_roles = [#nn.saved<operand 0>]} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<4x3x3x3xf32>
  nn.backward "nn.relu" saved() grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [], grad_operands = array<i64>, param_grads = array<i1>, flop_counts = array<i64: 0, 0, 0>} : (tensor<1x4x6x6xf32>) -> ()
  // CHECK-NEXT: nn.backward "nn.relu" saved() grads(%[[ARG2]]) {flop_counts = array<i64: 0, 0, 0>, forward_attrs = {}, forward_type = (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>, grad_operands = array<i64>, param_grads = array<i1>, saved_roles = []} : (tensor<1x4x6x6xf32>) -> ()
  %a0 = nn.accumulate_grad %gw, %gw2 : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.accumulate_grad %[[V2]]#1, %[[V3]] : tensor<4x3x3x3xf32>, tensor<4x3x3x3xf32>
  %a1 = nn.accumulate_grad %g0, %g1 {inplace} : tensor<4x8xf32>, tensor<8xf32>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.accumulate_grad %[[ARG4]], %[[ARG5]] {inplace} : tensor<4x8xf32>, tensor<8xf32>
  %m = nn.optimizer_state exp_avg of %p : tensor<4xf32> -> tensor<4xf32>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.optimizer_state exp_avg of %[[ARG6]] : tensor<4xf32>
  %v = nn.optimizer_state exp_avg_sq of %p : tensor<4xf32> -> tensor<4xf32>
  // CHECK-NEXT: %[[V7:[0-9]+]] = nn.optimizer_state exp_avg_sq of %[[ARG6]] : tensor<4xf32>
  %bucket = nn.grad_bucket "ddp.bucket0" params ["fc.weight", "fc.bias"] : tensor<52326xf32>
  // CHECK-NEXT: %{{.*}} = nn.grad_bucket "ddp.bucket0" params ["fc.weight", "fc.bias"] : tensor<52326xf32>
  %zflat = nn.zero_flat_params %p : (tensor<4xf32>) -> tensor<8xf32>
  // CHECK-NEXT: %[[ZF:[0-9]+]] = nn.zero_flat_params %[[ARG6]] : (tensor<4xf32>) -> tensor<8xf32>
  %zpart = nn.zero_partition %zflat {ranks = 2 : i64} : tensor<8xf32> -> tensor<4xf32>
  // CHECK-NEXT: nn.zero_partition %[[ZF]] {ranks = 2 : i64} : tensor<8xf32> -> tensor<4xf32>
  %z3 = nn.zero_flat_params %p {ranks = 3 : i64} : (tensor<4xf32>) -> tensor<2xf32>
  // CHECK-NEXT: nn.zero_flat_params %[[ARG6]] {ranks = 3 : i64} : (tensor<4xf32>) -> tensor<2xf32>
  %z3flat = nn.zero_buffer "reduce_scatter_flat" {phase = #nn<phase backward>} : tensor<6xf32>
  // CHECK-NEXT: nn.zero_buffer "reduce_scatter_flat" {phase = #nn<phase backward>} : tensor<6xf32>
  %zipg = nn.zero_buffer "ipg_buffer" {phase = #nn<phase backward>} : tensor<8xf32>
  // CHECK-NEXT: %[[ZB:[0-9]+]] = nn.zero_buffer "ipg_buffer" {phase = #nn<phase backward>} : tensor<8xf32>
  nn.zero_reduce %zipg {elements = 4 : i64, flatten = true, phase = #nn<phase backward>} : tensor<8xf32>
  // CHECK-NEXT: nn.zero_reduce %[[ZB]] {elements = 4 : i64, flatten = true, phase = #nn<phase backward>} : tensor<8xf32>
  nn.zero_grad_norm %zipg {largest = 4 : i64, phase = #nn<phase optimizer>} : tensor<8xf32>
  // CHECK-NEXT: nn.zero_grad_norm %[[ZB]] {largest = 4 : i64, phase = #nn<phase optimizer>} : tensor<8xf32>
  %zgrad = nn.zero_buffer "single_grad_partition" %zipg : tensor<8xf32> {phase = #nn<phase optimizer>} : tensor<4xf32>
  // CHECK-NEXT: nn.zero_buffer "single_grad_partition" %[[ZB]] : tensor<8xf32> {phase = #nn<phase optimizer>} : tensor<4xf32>
  %mq = nn.optimizer_state exp_avg of %q : tensor<2x3xf16> -> tensor<2x3xf16>
  // CHECK-NEXT: %[[V8:[0-9]+]] = nn.optimizer_state exp_avg of %[[ARG8]] : tensor<2x3xf16>
  %vq = nn.optimizer_state exp_avg_sq of %q : tensor<2x3xf16> -> tensor<2x3xf16>
  // CHECK-NEXT: %[[V9:[0-9]+]] = nn.optimizer_state exp_avg_sq of %[[ARG8]] : tensor<2x3xf16>
  %buf = nn.optimizer_state momentum_buffer of %p : tensor<4xf32> -> tensor<4xf32>
  // CHECK-NEXT: %[[V10:[0-9]+]] = nn.optimizer_state momentum_buffer of %[[ARG6]] : tensor<4xf32>
  nn.optimizer_step adam foreach params(%p, %q) grads(%gp, %gq) state(%m, %v, %mq, %vq) : (tensor<4xf32>, tensor<2x3xf16>, tensor<4xf32>, tensor<2x3xf16>, tensor<4xf32>, tensor<4xf32>, tensor<2x3xf16>, tensor<2x3xf16>) -> ()
  // CHECK-NEXT: nn.optimizer_step adam foreach params(%[[ARG6]], %[[ARG8]]) grads(%[[ARG7]], %[[ARG9]]) state(%[[V6]], %[[V7]], %[[V8]], %[[V9]]) : (tensor<4xf32>, tensor<2x3xf16>, tensor<4xf32>, tensor<2x3xf16>, tensor<4xf32>, tensor<4xf32>, tensor<2x3xf16>, tensor<2x3xf16>) -> ()
  nn.optimizer_step adamw fused params(%p) grads(%gp) state(%m, %v) {weight_decay = 1.000000e-02 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  // CHECK-NEXT: nn.optimizer_step adamw fused params(%[[ARG6]]) grads(%[[ARG7]]) state(%[[V6]], %[[V7]]) {weight_decay = 1.000000e-02 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  nn.optimizer_step sgd for_loop params(%p) grads(%gp) state() : (tensor<4xf32>, tensor<4xf32>) -> ()
  // CHECK-NEXT: nn.optimizer_step sgd for_loop params(%[[ARG6]]) grads(%[[ARG7]]) state() : (tensor<4xf32>, tensor<4xf32>) -> ()
  nn.optimizer_step momentum foreach params(%p) grads(%gp) state(%buf) {weight_decay = 0.0 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  // CHECK-NEXT: nn.optimizer_step momentum foreach params(%[[ARG6]]) grads(%[[ARG7]]) state(%[[V10]]) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  nn.optimizer_step sgd foreach params() grads() state() : () -> ()
  // CHECK-NEXT: nn.optimizer_step sgd foreach params() grads() state() : () -> ()
  return
  // CHECK-NEXT: return
}

func.func @mean_pad_contiguous(%x: tensor<2x8x7x7xf32>, %t: tensor<2x3x4xf16>) {
  // CHECK-LABEL: func.func @mean_pad_contiguous(
  // CHECK-SAME:    %[[X:arg[0-9]+]]: tensor<2x8x7x7xf32>, %[[T:arg[0-9]+]]: tensor<2x3x4xf16>) {
  %0 = nn.mean %x {dims = array<i64: 2, 3>} : (tensor<2x8x7x7xf32>) -> tensor<2x8xf32>
  // CHECK-NEXT: %[[V0:[0-9]+]] = nn.mean %[[X]] {dims = array<i64: 2, 3>} : (tensor<2x8x7x7xf32>) -> tensor<2x8xf32>
  %1 = nn.mean %x {dims = array<i64: -1>, keepdim} : (tensor<2x8x7x7xf32>) -> tensor<2x8x7x1xf32>
  // CHECK-NEXT: %[[V1:[0-9]+]] = nn.mean %[[X]] {dims = array<i64: -1>, keepdim} : (tensor<2x8x7x7xf32>) -> tensor<2x8x7x1xf32>
  %2 = nn.mean %t {dims = array<i64: 0, 1, 2>} : (tensor<2x3x4xf16>) -> tensor<f16>
  // CHECK-NEXT: %[[V2:[0-9]+]] = nn.mean %[[T]] {dims = array<i64: 0, 1, 2>} : (tensor<2x3x4xf16>) -> tensor<f16>
  %3 = nn.pad %x {low = array<i64: 0, 0, 1, 0>, high = array<i64: 0, 0, 1, 2>} : (tensor<2x8x7x7xf32>) -> tensor<2x8x9x9xf32>
  // CHECK-NEXT: %[[V3:[0-9]+]] = nn.pad %[[X]] {high = array<i64: 0, 0, 1, 2>, low = array<i64: 0, 0, 1, 0>} : (tensor<2x8x7x7xf32>) -> tensor<2x8x9x9xf32>
  %4 = nn.pad %t {low = array<i64: 0, 1, 0>, high = array<i64: 0, 0, 0>, value = -1.0 : f64} : (tensor<2x3x4xf16>) -> tensor<2x4x4xf16>
  // CHECK-NEXT: %[[V4:[0-9]+]] = nn.pad %[[T]] {high = array<i64: 0, 0, 0>, low = array<i64: 0, 1, 0>, value = -1.000000e+00 : f64} : (tensor<2x3x4xf16>) -> tensor<2x4x4xf16>
  %5 = nn.permute %x {dims = array<i64: 0, 2, 3, 1>} : (tensor<2x8x7x7xf32>) -> tensor<2x7x7x8xf32>
  // CHECK-NEXT: %[[V5:[0-9]+]] = nn.permute %[[X]] {dims = array<i64: 0, 2, 3, 1>} : (tensor<2x8x7x7xf32>) -> tensor<2x7x7x8xf32>
  %6 = nn.contiguous %5 : tensor<2x7x7x8xf32>
  // CHECK-NEXT: %[[V6:[0-9]+]] = nn.contiguous %[[V5]] : tensor<2x7x7x8xf32>
  %7 = nn.roll %6 {shifts = array<i64: -3, 3>, dims = array<i64: 1, 2>} : tensor<2x7x7x8xf32>
  // CHECK-NEXT: %[[V7:[0-9]+]] = nn.roll %[[V6]] {dims = array<i64: 1, 2>, shifts = array<i64: -3, 3>} : tensor<2x7x7x8xf32>
  return
  // CHECK-NEXT: return
}

func.func @elementwise_math(%x: tensor<2x8xf32>) {
  // CHECK-LABEL: func.func @elementwise_math(
  // CHECK-SAME:    %[[X:arg[0-9]+]]: tensor<2x8xf32>) {
  %0 = nn.pow %x {exponent = 2.0 : f64} : tensor<2x8xf32>
  // CHECK-NEXT: nn.pow %[[X]] {exponent = 2.000000e+00 : f64} : tensor<2x8xf32>
  %1 = nn.sqrt %x : tensor<2x8xf32>
  // CHECK-NEXT: nn.sqrt %[[X]] : tensor<2x8xf32>
  %2 = nn.rsqrt %x : tensor<2x8xf32>
  // CHECK-NEXT: nn.rsqrt %[[X]] : tensor<2x8xf32>
  %3 = nn.reciprocal %x : tensor<2x8xf32>
  // CHECK-NEXT: nn.reciprocal %[[X]] : tensor<2x8xf32>
  %4 = nn.exp %x : tensor<2x8xf32>
  // CHECK-NEXT: nn.exp %[[X]] : tensor<2x8xf32>
  %5 = nn.neg %x : tensor<2x8xf32>
  // CHECK-NEXT: nn.neg %[[X]] : tensor<2x8xf32>
  %6 = nn.constant dense<1.0> : tensor<2x8xf32>
  // CHECK-NEXT: nn.constant dense<1.000000e+00> : tensor<2x8xf32>
  %m = nn.constant dense<true> : tensor<8xi1>
  // CHECK-NEXT: %[[M:.*]] = nn.constant dense<true> : tensor<8xi1>
  %7 = nn.masked_fill %x, %m {value = -1.0 : f64} : (tensor<2x8xf32>, tensor<8xi1>) -> tensor<2x8xf32>
  // CHECK-NEXT: nn.masked_fill %[[X]], %[[M]] {value = -1.000000e+00 : f64} : (tensor<2x8xf32>, tensor<8xi1>) -> tensor<2x8xf32>
  %8 = nn.masked_fill %x, %m {value = -1.0 : f64, where} : (tensor<2x8xf32>, tensor<8xi1>) -> tensor<2x8xf32>
  // CHECK-NEXT: nn.masked_fill %[[X]], %[[M]] {value = -1.000000e+00 : f64, where} : (tensor<2x8xf32>, tensor<8xi1>) -> tensor<2x8xf32>
  %9 = nn.constant dense<0.0> : tensor<1x2x8xf32> {model_dtype}
  // CHECK-NEXT: nn.constant dense<0.000000e+00> : tensor<1x2x8xf32> {model_dtype}
  nn.keep_alive %x, %9 : tensor<2x8xf32>, tensor<1x2x8xf32> {model_frame}
  // CHECK-NEXT: nn.keep_alive %[[X]], %{{.*}} : tensor<2x8xf32>, tensor<1x2x8xf32> {model_frame}
  return
  // CHECK-NEXT: return
}
