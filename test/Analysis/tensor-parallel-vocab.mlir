// Vocabulary parallelism in one rank's step (tp=2): the embedding
// row-parallel over the vocabulary (nn.vocab_parallel_embedding, then the
// all-reduce of its partial sums: --tp-plan=vocab) and, under torch's
// loss_parallel() (--loss-parallel), the cross-entropy on lm_head's shard
// (nn.vocab_parallel_cross_entropy), the gather dropped. A vocabulary of
// 16 over 2 ranks: this rank holds 8 rows of the table and of lm_head.
//
// Inference, by hand (CPU, fp32): persistent ids [4] i64 32 B, the table
// shard [8, 4] 128 B and lm_head's [8, 4] 128 B: 288. The lookup holds
// _MaskPartial's bool mask (4 B) and shifted ids (32 B) beside its [4, 4]
// partial sums (64 B): 100; the all-reduce 64 + 64; the linear h 64 + s
// [4, 8] 128; the gather s, its [8, 8] buffer 256 and y [4, 16] 256: 640.
// Peak 288 + 640 = 928, at the gather.
// RUN: vram-opt %s --mode=inference --device=cpu --parallel=tp=2 --format=json | FileCheck %s --check-prefix=INFER
// INFER: "peak_bytes": 928,
// INFER: "op": "nn.all_gather_output",
// INFER: "loss_parallel": false,
// INFER: "tp_plan": "vocab",
//
// Training with --loss-parallel (SGD): the target [4] i64 (32 B) joins the
// persistent bytes, 320. At the loss the rank holds h (64 B, saved by the
// linear), s (128 B) and _log_softmax's x - max and exp(x - max) (2 x
// 128) with the loss (4 B): 320 + 452 = 772. Its backward holds h, the
// log-probabilities (128 B), the loss, the shard's gradient (128 B), the
// zero gradient and grad + exp(log_probs) (2 x 128) and 4 rows of 33
// bytes (the int64 safe target, the bool mask, the int64 shifted target,
// the fp32 update, arange(4) int64, the masked fp32 grad_output) with
// grad_output / total_weight (4 B): 320 + 64 + 128 + 4 + 128 + 256 + 132
// + 4 = 1,036, the step's peak.
// RUN: vram-opt %s --mode=train --optimizer=sgd --device=cpu --parallel=tp=2 --loss-parallel --format=json --timeline | FileCheck %s --check-prefix=TRAIN
// TRAIN: "peak_bytes": 1036,
// TRAIN: "loss_parallel": true,
// TRAIN: "tp_plan": "vocab",
// Per step the rank all-reduces the lookup's partial sums (64 B), the
// linear's input gradient (64 B) and the loss's three fp32 rows (each row's
// max, sum of exponentials and target log-probability: 3 x 4 x 4 = 48 B):
// 176 B, half of it sent over 2 ranks, twice (2 (2 - 1) / 2 x 176 = 176);
// nothing is all-gathered.
// TRAIN: "all_gather_bytes": 0,
// TRAIN: "all_reduce_bytes": 176,
// TRAIN: "sent_bytes": 176
// TRAIN: "live_bytes": 772,
// TRAIN-NEXT: "name": "loss",
// TRAIN-NEXT: "op": "nn.vocab_parallel_cross_entropy",
//
// The step: the loss reads the shard; no gather is left.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss-parallel" | FileCheck %s --check-prefix=STEP
// STEP-NOT: nn.all_gather_output
// STEP: nn.vocab_parallel_cross_entropy %{{.*}}, %{{.*}} {ranks = 2 : i64} : (tensor<4x8xf32>, tensor<4xi64>) -> tensor<f32>
// STEP-NOT: nn.all_gather_output

func.func @forward(%ids: tensor<4xi64>) -> tensor<4x16xf32> attributes {nn.tensor_parallel = 2 : i64} {
  %e = nn.param "model.embed_tokens.weight" : tensor<8x4xf32>
  %p = nn.vocab_parallel_embedding %e, %ids {ranks = 2 : i64} : (tensor<8x4xf32>, tensor<4xi64>) -> tensor<4x4xf32>
  %h = nn.all_reduce %p {ranks = 2 : i64} : tensor<4x4xf32>
  %x = nn.all_reduce_grad %h {ranks = 2 : i64} : tensor<4x4xf32>
  %w = nn.param "lm_head.weight" : tensor<8x4xf32>
  %s = nn.linear %x, %w : (tensor<4x4xf32>, tensor<8x4xf32>) -> tensor<4x8xf32>
  %y = nn.all_gather_output %s {ranks = 2 : i64} : tensor<4x8xf32> -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
