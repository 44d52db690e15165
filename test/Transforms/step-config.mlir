// What the step is (optimizer, LoRA configuration, checkpointed modules) is a
// typed attribute on the function, set by the pass that made it so; the
// report reads these (test/Report/step-config.mlir), not the flags.

// vram-build-step: nn.optimizer on a training step, none on inference.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd implementation=for-loop weight-decay=0.01" | FileCheck %s --check-prefix=SGD
// SGD: func.func @step({{.*}} attributes {nn.device = "cuda", nn.mode = #nn<mode train>, nn.optimizer = #nn.optimizer_config<sgd, for_loop, weight_decay = 1.000000e-02>, nn.torch_version = "2"}
// SGD-COUNT-3: nn.optimizer_step sgd for_loop {{.*}} {weight_decay = 1.000000e-02 : f64}
// RUN: vram-opt %s --vram-build-step | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: nn.optimizer = #nn.optimizer_config<adam, foreach, weight_decay = 0.000000e+00>
// RUN: vram-opt %s --vram-build-step="mode=inference" | FileCheck %s --check-prefix=INFER
// INFER-NOT: nn.optimizer =
// A step with no parameter to update still says its optimizer.
// RUN: vram-opt %s --vram-freeze="patterns=*" --vram-build-step="optimizer=momentum input-requires-grad=true" | FileCheck %s --check-prefix=FROZEN
// FROZEN: nn.optimizer = #nn.optimizer_config<momentum, foreach, weight_decay = 0.000000e+00>
// FROZEN-NOT: nn.optimizer_step
// RUN: not vram-opt %s --vram-build-step="weight-decay=-1" 2>&1 | FileCheck %s --check-prefix=DECAY
// DECAY: error: weight-decay must be a finite number >= 0, got -1

// vram-lora: nn.lora on @forward, carried to the @step built from it.
// RUN: vram-opt %s --vram-lora="r=4 alpha=32 dropout=0.1 targets=linear,b.fc" | FileCheck %s --check-prefix=LORA
// LORA: func.func @forward({{.*}} attributes {nn.lora = #nn.lora<r = 4, alpha = 3.200000e+01, dropout = 1.000000e-01, targets = ["linear", "b.fc"]>}
// RUN: vram-opt %s --vram-lora="r=2 targets=a.fc1" --vram-build-step | FileCheck %s --check-prefix=LORASTEP
// LORASTEP: func.func @step({{.*}} attributes {{{.*}}nn.lora = #nn.lora<r = 2, alpha = 8.000000e+00, dropout = 0.000000e+00, targets = ["a.fc1"]>{{.*}}}

// vram-checkpoint: nn.checkpoint on the step, the patterns in order; a
// second run adds its new ones.
// RUN: vram-opt %s --vram-build-step --vram-checkpoint="modules=b,a" | FileCheck %s --check-prefix=CKPT
// CKPT: func.func @step({{.*}} attributes {{{.*}}nn.checkpoint = ["b", "a"]{{.*}}}
// RUN: vram-opt %s --vram-build-step --vram-checkpoint="modules=a" --vram-checkpoint="modules=a,b" | FileCheck %s --check-prefix=TWICE
// TWICE: nn.checkpoint = ["a", "b"]

// The attributes print and parse back (the step IR is a complete record).
// RUN: vram-opt %s --vram-lora="r=4 alpha=32 dropout=0.1 targets=linear" --vram-build-step="optimizer=adamw weight-decay=0.1" --vram-checkpoint="modules=a" | vram-opt --format=mlir - | FileCheck %s --check-prefix=ROUND
// ROUND: func.func @step({{.*}} attributes {nn.checkpoint = ["a"], nn.device = "cuda", nn.lora = #nn.lora<r = 4, alpha = 3.200000e+01, dropout = 1.000000e-01, targets = ["linear"]>, nn.mode = #nn<mode train>, nn.optimizer = #nn.optimizer_config<adamw, foreach, weight_decay = 1.000000e-01>, nn.torch_version = "2"}

func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w1 = nn.param "a.fc1.weight" : tensor<16x8xf32> loc("a.fc1")
  %h1 = nn.linear %x, %w1 : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32> loc("a.fc1")
  %r = nn.relu %h1 : tensor<2x16xf32> loc("a.act")
  %w2 = nn.param "a.fc2.weight" : tensor<16x16xf32> loc("a.fc2")
  %h2 = nn.linear %r, %w2 : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32> loc("a.fc2")
  %w3 = nn.param "b.fc.weight" : tensor<4x16xf32> loc("b.fc")
  %o = nn.linear %h2, %w3 : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32> loc("b.fc")
  return %o : tensor<2x4xf32>
}
