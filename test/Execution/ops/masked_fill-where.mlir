// REQUIRES: execution
// nn.masked_fill {where}: torch.where(mask, x, -2.5), x [2, 4], mask [4]
// (true, false, true, false). One SGD step (lr 0.1) on mse against zeros,
// by hand (the expected files in Inputs/masked_fill-where-sgd):
//   y = [[1, -2.5, 3, -2.5], [0.5, -2.5, -1, -2.5]]
//   loss = mean(y^2) = 36.25 / 8 = 4.53125
//   dL/dx = where(mask, 2 y / 8, 0) = [[0.25, 0, 0.75, 0], [0.125, 0, -0.25, 0]]
//   x - 0.1 dL/dx = [[0.975, -2, 2.925, -4], [0.4875, 2, -0.975, 1]]
// The measured allocation equals the prediction; on the CPU's loops, then
// on the GPU lowering's kernels run on the host.
// RUN: rm -rf %t && mkdir -p %t
// RUN: vram-opt %s --mode=train --loss=mse --optimizer=sgd --lr=0.1 --validate=cpu \
// RUN:   --input-data=labels=%S/Inputs/masked_fill-where/labels.npy,x=%S/Inputs/masked_fill-where/x.npy --dump=%t/cpu | FileCheck %s
// RUN: %compare-npy %S/Inputs/masked_fill-where-sgd %t/cpu | FileCheck %s --check-prefix=CMP
// RUN: vram-opt %s --mode=train --loss=mse --optimizer=sgd --lr=0.1 --validate=gpu-emulated \
// RUN:   --input-data=labels=%S/Inputs/masked_fill-where/labels.npy,x=%S/Inputs/masked_fill-where/x.npy --dump=%t/gpu-emulated | FileCheck %s
// RUN: %compare-npy %S/Inputs/masked_fill-where-sgd %t/gpu-emulated | FileCheck %s --check-prefix=CMP
// CHECK: peak bytes {{ *}}[[PEAK:[0-9,]+]] {{ *}}[[PEAK]] {{ *}}0
// CMP: ok loss.npy
// CMP-NEXT: ok x.grad.npy
// CMP-NEXT: ok x.npy

func.func @forward() -> tensor<2x4xf32> {
  %x = nn.param "x" : tensor<2x4xf32>
  %m = nn.constant dense<[true, false, true, false]> : tensor<4xi1>
  %y = nn.masked_fill %x, %m {value = -2.500000e+00 : f64, where} : (tensor<2x4xf32>, tensor<4xi1>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
