// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adam implementation=for-loop loss=mse" | FileCheck %s
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adam implementation=for-loop loss=mse" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=PEAK
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adam optimizer-in-backward loss=mse" | FileCheck %s --check-prefix=HOOKS

// optimizer.zero_grad(set_to_none=True) drops .grad after optimizer.step()
// (at the next iteration's start, or right after step() as transformers'
// Trainer calls it): a for-loop optimizer updates one parameter at a time
// and every gradient stays alive until the update ends. Measured with
// torch 2.15 on the CPU: ViTForImageClassification's Adam step peaks at
// its largest weight's update with all 6,588,428 gradient bytes alive
// (benchmarks/accuracy/tp.py vit_plain_adam; test/Import/HuggingFace/vit.test).
// CHECK: nn.optimizer_step adam for_loop params(%{{.*}}) grads(%[[GB:.*]]) state
// CHECK: nn.optimizer_step adam for_loop params(%{{.*}}) grads(%[[GW:.*]]) state
// CHECK: nn.release %[[GB]], %[[GW]] {nn.zero_grad, phase = #nn<phase optimizer>}
// CHECK-NEXT: return
//
// The peak is w's update, b's gradient still alive: parameters 64 x 64 + 64
// floats (16,640 bytes), Adam's exp_avg and exp_avg_sq (33,280), x and the
// target (2 x 1,024), both gradients (16,640), the update's two w-sized
// temporaries (exp_avg_sq.sqrt() and the step's quotient, 2 x 16,384), b's
// denom, still bound to its name in the same step() call (256), and the
// loss (4): 101,636 bytes.
// PEAK: peak 101636 at [12] nn.optimizer_step
// PEAK: gradients=16640

// With the optimizer in backward, each gradient dies after its update.
// HOOKS-NOT: nn.zero_grad
func.func @forward(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  %b = nn.param "b" : tensor<64xf32>
  %w = nn.param "w" : tensor<64x64xf32>
  %y = nn.linear %x, %w, %b : (tensor<4x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<4x64xf32>
  return %y : tensor<4x64xf32>
}
