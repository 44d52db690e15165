// FLOPs of the resizes under each convention (docs/Flops.md), by hand for
// x [1, 2, 4, 5] resized to [1, 2, 8, 10] (160 output elements):
//   nearest: fvcore's elementwise_flop_counter(0, 1), 160; flop_counter
//     none; full none forward (copies), 160 backward (the adds);
//   bilinear: fvcore's elementwise_flop_counter(0, 4), 640; flop_counter
//     none; full a multiply-add per tap, 8 x 160 = 1,280, and as much
//     backward.
// Their sum (nn.add, full 160) feeds mse (full 3 x 160 = 480 forward, its
// backward 2 x 160 = 320); x's two gradients are summed (full 40). So full
// counts 1,280 + 160 + 480 = 1,920 forward and 320 + 1,280 + 160 + 40 =
// 1,800 backward; nn.backward's flop_counts are (macs, flops, full).
// RUN: vram-opt %s --mode=inference --flops=macs --format=json | FileCheck %s --check-prefix=MACS
// RUN: vram-opt %s --mode=inference --flops=flops --format=json | FileCheck %s --check-prefix=FLOPS
// RUN: vram-opt %s --mode=train --loss=mse --flops=full --format=json | FileCheck %s --check-prefix=FULL
// MACS: "forward": 800,
// MACS: "forward_flops": 160,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.upsample_nearest2d",
// MACS: "forward_flops": 640,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.upsample_bilinear2d",
// FLOPS: "forward": 0,
// FULL: "backward": 1800,
// FULL: "forward": 1920,
// RUN: vram-opt %s --mode=train --loss=mse --format=mlir | FileCheck %s --check-prefix=NODES
// NODES-DAG: nn.backward "nn.upsample_bilinear2d" saved() grads({{.*}}) {flop_counts = array<i64: 0, 0, 1280>
// NODES-DAG: nn.backward "nn.upsample_nearest2d" saved() grads({{.*}}) {flop_counts = array<i64: 0, 0, 160>

func.func @forward() -> tensor<1x2x8x10xf32> {
  %x = nn.param "x" : tensor<1x2x4x5xf32>
  %n = nn.upsample_nearest2d %x : (tensor<1x2x4x5xf32>) -> tensor<1x2x8x10xf32>
  %b = nn.upsample_bilinear2d %x : (tensor<1x2x4x5xf32>) -> tensor<1x2x8x10xf32>
  %s = nn.add %n, %b : (tensor<1x2x8x10xf32>, tensor<1x2x8x10xf32>) -> tensor<1x2x8x10xf32>
  return %s : tensor<1x2x8x10xf32>
}
