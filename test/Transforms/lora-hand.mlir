// RUN: vram-opt %s --mode=train --optimizer=sgd --format=json > %t.full.json
// RUN: %check-json %t.full.json memory.saved_for_backward_bytes 256 parameters.trainable 832
// RUN: vram-opt %s --lora=r=4,alpha=8,dropout=0.5,targets=linear --mode=train --optimizer=sgd --format=json > %t.lora.json
// RUN: %check-json %t.lora.json parameters.trainable 360 parameters.count 1192 flops.forward 4768 memory.saved_for_backward_bytes 512 memory.persistent_bytes 4912 memory.peak_bytes 6548
// RUN: FileCheck %s --input-file %t.lora.json --check-prefix=PEAK
// PEAK: "peak_op": {
// PEAK: "name": "fc1.lora_B",
// PEAK-NEXT: "op": "nn.backward",

// Two bias-free linear layers, x [2, 16] -> fc1 (16 -> 32) -> h [2, 32] ->
// fc2 (32 -> 10), fp32, CUDA (torch 2), SGD. Counted by hand:
//
// Full fine-tuning: fc1 keeps x (a model input, not counted), fc2 keeps h:
// 2*32*4 = 256 bytes. Parameters 32*16 + 10*32 = 832.
//
// LoRA r=4, alpha=8 (scaling 2), dropout 0.5 on both layers; base weights
// frozen. Trainable: fc1.lora_A 4*16 + fc1.lora_B 32*4 + fc2.lora_A 4*32 +
// fc2.lora_B 10*4 = 360, of 832 + 360 = 1192.
// FLOPs (2 x multiply-adds): fc1 2048, fc1.lora_A 256, fc1.lora_B 512, fc2
// 1280, fc2.lora_A 512, fc2.lora_B 160: 4768.
// Saved for backward:
//   fc1: x needs no grad, so dropout(x) records nothing; lora_A keeps d1 =
//     dropout(x) [2, 16] (128); lora_B keeps lora_A's output [2, 4] (32);
//     `* scaling` multiplies by a Python float, of which torch 2 keeps no
//     tensor (0; measured: gpt_mini's `* (1 / sqrt(d))` costs nothing in
//     benchmarks/accuracy/results/torch-2.15-cpu.json, 8 bytes in 1.13's)
//   fc2: h requires grad (through fc1's adapter); the frozen base keeps only
//     its weight; dropout keeps a bool mask [2, 32] (64); lora_A keeps d2
//     [2, 32] (256); lora_B keeps [2, 4] (32); the scalar (0)
//   total 512 (the adapters cost 256 bytes more than full fine-tuning here).
// Persistent: parameters 1192*4 + x 128 + targets 2*8 = 4912.
// Peak: the live non-persistent bytes after the forward are the 512 saved,
// the loss (4) and nothing else; backward, in reverse order, adds and frees
// (the logits' gradient g [2, 10], 80, is shared by both sides of fc2's sum):
//   fc2: after the mul, lora_B, lora_A, dropout and base nodes and the
//     in-place accumulation of h's two gradients, live = d1 128 + a1 32 +
//     loss 4 + fc2.lora_B grad 160 + fc2.lora_A grad 512 + h's gradient 256
//     = 1092
//   fc1's mul node: + grad [2, 32] 256 = 1348, frees h's gradient: 1092
//   fc1.lora_B node: + a1's grad 32 + fc1.lora_B grad 512 = 1636 (the peak)
//   fc1.lora_A node: + its weight grad 256 = 1604 (after lora_B freed a1
//     and its input gradient, 288)
// so the peak is 4912 + 1636 = 6548, at fc1.lora_B's backward node.
func.func @forward(%x: tensor<2x16xf32>) -> tensor<2x10xf32> {
  %w1 = nn.param "fc1.weight" : tensor<32x16xf32> loc("fc1")
  %h = nn.linear %x, %w1 : (tensor<2x16xf32>, tensor<32x16xf32>) -> tensor<2x32xf32> loc("fc1")
  %w2 = nn.param "fc2.weight" : tensor<10x32xf32> loc("fc2")
  %o = nn.linear %h, %w2 : (tensor<2x32xf32>, tensor<10x32xf32>) -> tensor<2x10xf32> loc("fc2")
  return %o : tensor<2x10xf32>
}
