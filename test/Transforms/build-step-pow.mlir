// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse" | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=PEAK

// pow_backward returns `grad * (e * self.pow(e - 1))`: self.pow(e - 1) and
// its product with e are two input-sized temporaries, both alive when the
// gradient is allocated. Measured with the profiler in torch 1.13 and 2.15
// (benchmarks/accuracy/facts.py --pow-probe, `pow_backward_cpu` in
// results/facts-torch-{1.13,2.15}-cpu.json): for a [2, 8, 64] f32 input
// (I = 4,096 bytes) PowBackward0 allocates "+I +8 +4 +I -4 -8 +I -I -I",
// 3 I = 12,288 bytes above the node's start with the gradient; the same
// for e = 2, 3, 0.5 and 1.
// CHECK-LABEL: func.func @step
// CHECK: nn.backward "nn.pow" {{.*}}workspace = array<i64: 4096, 4096>
//
// The step peak is in that node: the target and the parameter x (4,096
// each), the loss (4), mse's gradient of y (4,096), pow's gradient, x.grad
// (4,096), and the two temporaries (2 x 4,096): 24,580 bytes.
// PEAK: peak 24580 at [5] nn.backward
func.func @forward() -> tensor<2x8x64xf32> {
  %x = nn.param "x" : tensor<2x8x64xf32>
  %y = nn.pow %x {exponent = 2.0 : f64} : tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}

// -----

// An exponent of 0 returns zeros_like(self) (measured: "+I" only).
// CHECK-LABEL: func.func @step
// CHECK: nn.backward "nn.pow"
// CHECK-NOT: workspace
// CHECK: return
func.func @forward() -> tensor<2x8x64xf32> {
  %x = nn.param "x" : tensor<2x8x64xf32>
  %y = nn.pow %x {exponent = 0.0 : f64} : tensor<2x8x64xf32>
  return %y : tensor<2x8x64xf32>
}
