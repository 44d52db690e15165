// vram-parallel: DistributedDataParallel's gradient buckets on the built
// step, filled in the order backward finishes the gradients, the first
// closing at first-bucket bytes, the others at bucket-cap bytes.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-parallel="dp=2 first-bucket=200 bucket-cap=500" | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-parallel="dp=4" | FileCheck %s --check-prefix=ONE
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=inference" --vram-parallel="dp=4" | FileCheck %s --check-prefix=INFER

// fc1 (16x8 weight 512 B, bias 64 B) -> relu -> fc2 (4x16 weight 256 B,
// bias 16 B). Backward finishes fc2's gradients first, then fc1's:
// fc2.weight 256 >= 200 closes the first bucket (64 elements);
// fc2.bias 16 + fc1.weight 512 = 528 >= 500 closes the second (4 + 128);
// fc1.bias is left in the last (16).
// CHECK-LABEL: func.func @step
// CHECK-SAME: nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 500, first_bucket = 200, bucket_view = false>
// CHECK-NEXT: nn.grad_bucket "ddp.bucket0" params ["fc2.weight"] : tensor<64xf32>
// CHECK-NEXT: nn.grad_bucket "ddp.bucket1" params ["fc2.bias", "fc1.weight"] : tensor<132xf32>
// CHECK-NEXT: nn.grad_bucket "ddp.bucket2" params ["fc1.bias"] : tensor<16xf32>
// With DDP's defaults (1 MiB first bucket) all 212 elements share one.
// ONE: nn.parallel = #nn.parallel<dp = 4, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false>
// ONE-NEXT: nn.grad_bucket "ddp.bucket0" params ["fc2.weight", "fc2.bias", "fc1.weight", "fc1.bias"] : tensor<212xf32>
// ONE-NOT: nn.grad_bucket
// Inference has no gradients: the layout only.
// INFER: nn.parallel = #nn.parallel<dp = 4
// INFER-NOT: nn.grad_bucket
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w1 = nn.param "fc1.weight" : tensor<16x8xf32>
  %b1 = nn.param "fc1.bias" : tensor<16xf32>
  %w2 = nn.param "fc2.weight" : tensor<4x16xf32>
  %b2 = nn.param "fc2.bias" : tensor<4xf32>
  %h = nn.linear %x, %w1, %b1 : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %r = nn.relu %h : tensor<2x16xf32>
  %o = nn.linear %r, %w2, %b2 : (tensor<2x16xf32>, tensor<4x16xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %o : tensor<2x4xf32>
}
