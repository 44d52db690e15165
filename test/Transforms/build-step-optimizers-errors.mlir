// An optimizer with an implementation it does not come in: one error at the
// module. bitsandbytes runs a kernel per parameter (no foreach or fused
// form); torch.optim.Adafactor has no fused form (torch 2.15).
// RUN: vram-opt %s -verify-diagnostics --vram-build-step="mode=train optimizer=lion implementation=foreach"
// RUN: not vram-opt %s --vram-build-step="mode=train optimizer=adafactor implementation=fused" 2>&1 | FileCheck %s --check-prefix=FUSED
// FUSED: error: adafactor has no fused implementation
// FUSED-NOT: error
// RUN: not vram-opt %s --vram-build-step="mode=train optimizer=adafactor torch-version=1.13" 2>&1 | FileCheck %s --check-prefix=V113
// V113: error: torch.optim.Adafactor does not exist in torch 1.13 (it came in 2.5)
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=adamw8bit device=cpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: warning: the update is modelled as bitsandbytes' CUDA kernels run it (in place); its CPU backend adds float32 temporaries that are not modelled, so the CPU step peak is a lower bound

// The optimizer in backward frees each gradient after its update: no
// accumulation across micro-batches or steps (usage errors on the command
// line, exit code 2).
// RUN: not vram-opt %s --vram-build-step="mode=train optimizer-in-backward=true grad-accum=2" 2>&1 | FileCheck %s --check-prefix=INBWD
// INBWD: error: optimizer-in-backward applies to a training step whose hooks free each gradient after its update (mode=train, set-to-none, no grad-accum)
// RUN: not vram-opt --zoo=tiny_cnn --optimizer-in-backward --set-to-none=false 2>&1 | FileCheck %s --check-prefix=INBWD-CLI
// RUN: vram-opt --zoo=tiny_cnn --optimizer-in-backward --grad-accum=2 2>/dev/null; test $? -eq 2
// RUN: vram-opt --zoo=tiny_cnn --optimizer-in-backward --parallel=dp=2 2>/dev/null; test $? -eq 2
// INBWD-CLI: error: --optimizer-in-backward applies to training (--mode=train) with gradients freed after each update (no --grad-accum, no --set-to-none=false)

// expected-error @below {{lion has no foreach implementation (bitsandbytes runs a kernel per parameter: for_loop)}}
module {
  func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w = nn.param "w" : tensor<8x8xf32>
    %y = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
