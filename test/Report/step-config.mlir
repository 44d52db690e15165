// The report's config says what the step is from the IR (nn.optimizer,
// nn.lora, nn.checkpoint), however the passes were asked for: pass flags and
// driver flags give the same config.

// vram-build-step's optimizer, not the --optimizer flag's default (adam).
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" --format=json | FileCheck %s --check-prefix=SGD
// SGD: "lora": null,
// SGD-NEXT: "loss": "cross_entropy",
// SGD-NEXT: "max_grad_norm": null,
// SGD-NEXT: "mode": "train",
// SGD-NEXT: "optimizer": "sgd",
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" --format=text | FileCheck %s --check-prefix=SGDTEXT
// SGDTEXT: mode: train   batch: 2   optimizer: sgd   precision: fp32
// RUN: vram-opt %s --vram-build-step="mode=inference" --format=json | FileCheck %s --check-prefix=INF
// INF: "mode": "inference",
// INF-NEXT: "optimizer": null,

// vram-lora's configuration, in --lora's spelling.
// RUN: vram-opt %s --vram-lora="r=4 alpha=32 dropout=0.1 targets=linear" --format=json > %t.pass.json
// RUN: FileCheck %s --check-prefix=LORA < %t.pass.json
// LORA: "checkpoint": [],
// LORA: "lora": "r=4,alpha=32,dropout=0.1,targets=linear",
// LORA-NEXT: "loss": "cross_entropy",
// LORA-NEXT: "max_grad_norm": null,
// LORA-NEXT: "mode": "train",
// LORA-NEXT: "optimizer": "adam",
// The driver flag gives the same report.
// RUN: vram-opt %s --lora=r=4,alpha=32,dropout=0.1,targets=linear --format=json > %t.flag.json
// RUN: diff %t.pass.json %t.flag.json
// A spelling with defaults left out or keys reordered is reported canonically.
// RUN: vram-opt %s --lora=targets=a.fc1\|b.fc,r=2 --format=json | FileCheck %s --check-prefix=CANON
// CANON: "lora": "r=2,alpha=8,dropout=0,targets=a.fc1|b.fc",

// vram-checkpoint's modules.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" --vram-checkpoint="modules=a" --format=json > %t.ckpt-pass.json
// RUN: FileCheck %s --check-prefix=CKPT < %t.ckpt-pass.json
// CKPT: "checkpoint": [
// CKPT-NEXT: "a"
// CKPT-NEXT: ],
// RUN: vram-opt %s --mode=train --optimizer=sgd --checkpoint=a --format=json > %t.ckpt-flag.json
// RUN: diff %t.ckpt-pass.json %t.ckpt-flag.json

// A hand-written training step without nn.optimizer says its optimizer
// through its update.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=momentum" | sed 's/nn.optimizer = #nn.optimizer_config<[^>]*>, //' > %t.step.mlir
// RUN: not grep -q 'nn.optimizer =' %t.step.mlir
// RUN: vram-opt %t.step.mlir --format=json | FileCheck %s --check-prefix=HAND
// HAND: "optimizer": "momentum",

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
