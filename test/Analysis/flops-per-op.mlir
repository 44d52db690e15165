// Forward FLOPs of each op under each convention (docs/Flops.md), inference
// (batch_norm in eval form), hand-computed:
//   conv 2->3, 3x3, pad 1, bias, 4x4 output: macs = 1*prod(weight 3x2x3x3)*16 = 864,
//     flops = 2*macs, full adds the bias (48);
//   batch_norm eval, affine: 2 per element (48); relu: full 1 per element;
//   adaptive_avg_pool2d: 1 per input element (macs and full);
//   linear 3->5 with bias: 15 macs, full adds 5; softmax: full 3 per element;
//   matmul [2,3,4] x [4,5]: 2*3*5*4 = 120 macs;
//   attention B=1 H=2 L=S=4 E=Ev=8: flops 2*1*2*4*4*(8+8) = 1024, fvcore 0;
//   add: full 1 per output element.
// RUN: vram-opt %s --mode=inference --flops=macs --format=json | FileCheck %s --check-prefix=MACS
// RUN: vram-opt %s --mode=inference --flops=flops --format=json | FileCheck %s --check-prefix=FLOPS
// RUN: vram-opt %s --mode=inference --flops=full --format=json | FileCheck %s --check-prefix=FULL
// MACS: "forward": 1143,
// MACS: "forward_flops": 864,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.conv2d",
// MACS: "forward_flops": 96,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.batch_norm",
// MACS: "forward_flops": 0,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.relu",
// MACS: "forward_flops": 48,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.adaptive_avg_pool2d",
// MACS: "forward_flops": 0,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.flatten",
// MACS: "forward_flops": 15,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.linear",
// MACS: "forward_flops": 0,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.softmax",
// MACS: "forward_flops": 120,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.matmul",
// MACS: "forward_flops": 0,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.scaled_dot_product_attention",
// MACS: "forward_flops": 0,
// MACS-NEXT: "name":
// MACS-NEXT: "op": "nn.add",
// FLOPS: "forward": 3022,
// FLOPS: "forward_flops": 1728,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.conv2d",
// FLOPS: "forward_flops": 0,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.batch_norm",
// FLOPS: "forward_flops": 0,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.relu",
// FLOPS: "forward_flops": 0,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.adaptive_avg_pool2d",
// FLOPS: "forward_flops": 0,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.flatten",
// FLOPS: "forward_flops": 30,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.linear",
// FLOPS: "forward_flops": 0,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.softmax",
// FLOPS: "forward_flops": 240,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.matmul",
// FLOPS: "forward_flops": 1024,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.scaled_dot_product_attention",
// FLOPS: "forward_flops": 0,
// FLOPS-NEXT: "name":
// FLOPS-NEXT: "op": "nn.add",
// FULL: "forward": 3346,
// FULL: "forward_flops": 1776,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.conv2d",
// FULL: "forward_flops": 96,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.batch_norm",
// FULL: "forward_flops": 48,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.relu",
// FULL: "forward_flops": 48,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.adaptive_avg_pool2d",
// FULL: "forward_flops": 0,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.flatten",
// FULL: "forward_flops": 35,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.linear",
// FULL: "forward_flops": 15,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.softmax",
// FULL: "forward_flops": 240,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.matmul",
// FULL: "forward_flops": 1024,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.scaled_dot_product_attention",
// FULL: "forward_flops": 64,
// FULL-NEXT: "name":
// FULL-NEXT: "op": "nn.add",

func.func @forward(%x: tensor<1x2x4x4xf32>, %a: tensor<2x3x4xf32>, %q: tensor<1x2x4x8xf32>) -> tensor<1x5xf32> {
  %w = nn.param "conv.weight" : tensor<3x2x3x3xf32>
  %b = nn.param "conv.bias" : tensor<3xf32>
  %y = nn.conv2d %x, %w, %b {padding = array<i64: 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %g = nn.param "bn.weight" : tensor<3xf32>
  %bb = nn.param "bn.bias" : tensor<3xf32>
  %m = nn.buffer "bn.running_mean" : tensor<3xf32>
  %v = nn.buffer "bn.running_var" : tensor<3xf32>
  %n = nn.batch_norm %y weight %g bias %bb stats %m, %v : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  %r = nn.relu %n : tensor<1x3x4x4xf32>
  %p = nn.adaptive_avg_pool2d %r {output_size = array<i64: 1, 1>} : (tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32>
  %f = nn.flatten %p : (tensor<1x3x1x1xf32>) -> tensor<1x3xf32>
  %fw = nn.param "fc.weight" : tensor<5x3xf32>
  %fb = nn.param "fc.bias" : tensor<5xf32>
  %o = nn.linear %f, %fw, %fb : (tensor<1x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<1x5xf32>
  %s = nn.softmax %o {dim = 1 : i64} : tensor<1x5xf32>
  %mw = nn.param "mm.weight" : tensor<4x5xf32>
  %mm = nn.matmul %a, %mw : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %att = nn.scaled_dot_product_attention %q, %q, %q : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %sum = nn.add %att, %att : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %s : tensor<1x5xf32>
}
