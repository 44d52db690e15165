// loss=causal_lm: transformers' ForCausalLMLoss, the model called with
// labels. It computes on `logits.float()` (a copy in a bf16 model, kept for
// nothing: cross_entropy saves its log-probabilities), flattened to
// [B*T, V]; the model's frame holds the bf16 logits until the loss returns
// (nn.release). Measured against torch 2.15 in
// test/Transforms/parallel-fsdp.test.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=causal_lm" | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=causal_lm" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=MEM

// CHECK-LABEL: func.func @step(%arg0: tensor<2x4xi64>, %arg1: tensor<8xi64>) -> tensor<f32>
// CHECK: %[[LOGITS:.*]] = nn.linear
// CHECK-NEXT: %[[UP:.*]] = nn.cast %[[LOGITS]] : tensor<2x4x16xbf16> to tensor<2x4x16xf32>
// CHECK-NEXT: %[[FLAT:.*]] = nn.reshape %[[UP]] : tensor<2x4x16xf32> -> tensor<8x16xf32>
// CHECK-NEXT: nn.cross_entropy %[[FLAT]], %arg1 : (tensor<8x16xf32>, tensor<8xi64>) -> tensor<f32>
// CHECK: nn.release %[[LOGITS]] {phase = #nn<phase forward>} : tensor<2x4x16xbf16>
// CHECK-NEXT: nn.backward "nn.cross_entropy"
// The gradient flows back through the cast into bf16.
// CHECK: nn.backward "nn.cast" {{.*}} -> tensor<2x4x16xbf16>
// At the release, by hand: parameters 2 x 16 x 8 x 2 = 512, ids and
// targets 64 + 64, the embedding output linear saves 128, the bf16 logits
// 256 (still held), the fp32 log-probabilities 8 x 16 x 4 = 512 and the
// loss 4 (the fp32 copy is gone after cross_entropy): 1540; then the
// logits are freed.
// MEM: nn.release (forward):
// MEM-NEXT: live 1540
// MEM-NEXT: free #{{[0-9]+}}
// MEM-NEXT: nn.backward (backward):
func.func @forward(%ids: tensor<2x4xi64>) -> tensor<2x4x16xbf16> attributes {nn.sequence_logits} {
  %e = nn.param "embed.weight" : tensor<16x8xbf16>
  %h = nn.embedding %e, %ids : (tensor<16x8xbf16>, tensor<2x4xi64>) -> tensor<2x4x8xbf16>
  %w = nn.param "lm_head.weight" : tensor<16x8xbf16>
  %y = nn.linear %h, %w : (tensor<2x4x8xbf16>, tensor<16x8xbf16>) -> tensor<2x4x16xbf16>
  return %y : tensor<2x4x16xbf16>
}

// -----

// In an fp32 model `.float()` is the identity: no copy, no release.
// CHECK-LABEL: func.func @step(%arg0: tensor<2x4xi64>, %arg1: tensor<8xi64>) -> tensor<f32>
// CHECK-NOT: nn.cast
// CHECK-NOT: nn.release
// CHECK: nn.optimizer_step
func.func @forward(%ids: tensor<2x4xi64>) -> tensor<2x4x16xf32> attributes {nn.sequence_logits} {
  %e = nn.param "embed.weight" : tensor<16x8xf32>
  %h = nn.embedding %e, %ids : (tensor<16x8xf32>, tensor<2x4xi64>) -> tensor<2x4x8xf32>
  %w = nn.param "lm_head.weight" : tensor<16x8xf32>
  %y = nn.linear %h, %w : (tensor<2x4x8xf32>, tensor<16x8xf32>) -> tensor<2x4x16xf32>
  return %y : tensor<2x4x16xf32>
}

// -----

// An encoder-decoder LM's own loss (nn.seq2seq_lm, T5ForConditionalGeneration
// called with labels) takes its bf16 logits as they are, and the forward's
// frame holds what it names until the loss returns: nn.keep_alive
// {model_frame} moves past the loss (here the hidden states h, which
// nothing saves, are alive in the loss: 2 x 4 x 8 x 2 = 128 bytes).
// CHECK-LABEL: func.func @step(%arg0: tensor<2x4xi64>, %arg1: tensor<8xi64>) -> tensor<bf16>
// CHECK-NOT: nn.cast
// CHECK: %[[H:.*]] = nn.embedding
// CHECK: %[[FLAT:.*]] = nn.reshape {{.*}} : tensor<2x4x16xbf16> -> tensor<8x16xbf16>
// CHECK-NEXT: nn.cross_entropy %[[FLAT]], %arg1 : (tensor<8x16xbf16>, tensor<8xi64>) -> tensor<bf16>
// CHECK: nn.keep_alive %[[H]] : tensor<2x4x8xbf16> {model_frame}
// CHECK-NEXT: nn.backward "nn.cross_entropy"
// At the loss, by hand: the shared parameter 16 x 8 x 2 = 256, ids and
// targets 64 + 64, the frame's h 128, the scaled hidden states the linear
// saves 128, the logits 256, the loss 2 and the log-probabilities 256:
// 1154; h is freed at the frame's end.
// MEM: nn.saved (forward):
// MEM: live 1154
// MEM-NEXT: free #{{[0-9]+}}
// MEM-NEXT: nn.keep_alive (forward):
// MEM-NEXT: live 898
// MEM-NEXT: free #{{[0-9]+}}
func.func @forward(%ids: tensor<2x4xi64>) -> tensor<2x4x16xbf16> attributes {nn.sequence_logits, nn.seq2seq_lm} {
  %e = nn.param "shared.weight" : tensor<16x8xbf16>
  %h = nn.embedding %e, %ids : (tensor<16x8xbf16>, tensor<2x4xi64>) -> tensor<2x4x8xbf16>
  %c = nn.constant dense<5.000000e-01> : tensor<f32> {wrapped_number}
  %s = nn.mul %h, %c : (tensor<2x4x8xbf16>, tensor<f32>) -> tensor<2x4x8xbf16>
  %y = nn.linear %s, %e : (tensor<2x4x8xbf16>, tensor<16x8xbf16>) -> tensor<2x4x16xbf16>
  nn.keep_alive %h : tensor<2x4x8xbf16> {model_frame}
  return %y : tensor<2x4x16xbf16>
}

