// Invalid step configuration attributes (nn.optimizer, nn.lora,
// nn.checkpoint): one per split.

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// nn.optimizer: not an optimizer configuration
// expected-error @+1 {{'nn.optimizer' must be an optimizer configuration (#nn.optimizer_config<adam, foreach, weight_decay = 0.0>), got "adam"}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.optimizer = "adam"} {
  return
}

// -----

// nn.optimizer: only on a training step
// expected-error @+1 {{'nn.optimizer' must be on a training step (nn.mode = #nn<mode train>)}}
func.func @step() attributes {nn.mode = #nn<mode inference>, nn.optimizer = #nn.optimizer_config<sgd, foreach, weight_decay = 0.0>} {
  return
}

// -----

// nn.optimizer: a negative weight decay
// expected-error @+1 {{optimizer weight_decay must be a finite number >= 0}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.optimizer = #nn.optimizer_config<sgd, foreach, weight_decay = -1.0>} {
  return
}

// -----

// nn.optimizer: an unknown implementation
func.func @step() attributes {nn.mode = #nn<mode train>,
  // expected-error @+2 {{expected ::vram::nn::OptimizerImpl to be one of: foreach, fused, for_loop}}
  // expected-error @+1 {{failed to parse NN_OptimizerConfigAttr parameter 'implementation'}}
  nn.optimizer = #nn.optimizer_config<sgd, vectorized, weight_decay = 0.0>} {
  return
}

// -----

// nn.optimizer: the updates agree with it
func.func @step(%p: tensor<4xf32>, %g: tensor<4xf32>) attributes {nn.mode = #nn<mode train>, nn.optimizer = #nn.optimizer_config<adam, foreach, weight_decay = 0.0>} {
  // expected-error @+1 {{'nn.optimizer_step' disagrees with the step's 'nn.optimizer' = #nn.optimizer_config<adam, foreach, weight_decay = 0.000000e+00>}}
  nn.optimizer_step sgd foreach params(%p) grads(%g) state() : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// nn.optimizer: the same weight decay
func.func @step(%p: tensor<4xf32>, %g: tensor<4xf32>) attributes {nn.mode = #nn<mode train>, nn.optimizer = #nn.optimizer_config<sgd, foreach, weight_decay = 0.0>} {
  // expected-error @+1 {{'nn.optimizer_step' disagrees with the step's 'nn.optimizer'}}
  nn.optimizer_step sgd foreach params(%p) grads(%g) state() {weight_decay = 0.1 : f64} : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// nn.lora: not a LoRA configuration
// expected-error @+1 {{'nn.lora' must be a LoRA configuration}}
func.func @forward() attributes {nn.lora = "r=4,targets=conv2d"} {
  return
}

// -----

// nn.lora: r > 0
// expected-error @+1 {{LoRA r must be > 0, got 0}}
func.func @forward() attributes {nn.lora = #nn.lora<r = 0, alpha = 8.0, dropout = 0.0, targets = ["conv2d"]>} {
  return
}

// -----

// nn.lora: dropout in [0, 1)
// expected-error @+1 {{LoRA dropout must be in [0, 1), got 1}}
func.func @forward() attributes {nn.lora = #nn.lora<r = 4, alpha = 8.0, dropout = 1.0, targets = ["conv2d"]>} {
  return
}

// -----

// nn.lora: some targets
// expected-error @+1 {{LoRA targets must be a non-empty array}}
func.func @forward() attributes {nn.lora = #nn.lora<r = 4, alpha = 8.0, dropout = 0.0, targets = []>} {
  return
}

// -----

// nn.lora: targets are strings
// expected-error @+1 {{LoRA targets must be non-empty strings, got 1 : i64}}
func.func @forward() attributes {nn.lora = #nn.lora<r = 4, alpha = 8.0, dropout = 0.0, targets = ["conv2d", 1]>} {
  return
}

// -----

// nn.lora: on a function
func.func @forward() {
  // expected-error @+1 {{'nn.lora' must be a LoRA configuration}}
  %w = nn.param "w" {nn.lora = #nn.lora<r = 4, alpha = 8.0, dropout = 0.0, targets = ["linear"]>} : tensor<4xf32>
  return
}

// -----

// nn.checkpoint: an array of module patterns
// expected-error @+1 {{'nn.checkpoint' must be a non-empty array of non-empty module patterns, got "layer1"}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.checkpoint = "layer1"} {
  return
}

// -----

// nn.checkpoint: no empty pattern
// expected-error @+1 {{'nn.checkpoint' must be a non-empty array of non-empty module patterns, got ["layer1", ""]}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.checkpoint = ["layer1", ""]} {
  return
}

// -----

// nn.checkpoint: only on a training step
// expected-error @+1 {{'nn.checkpoint' must be on a training step (nn.mode = #nn<mode train>)}}
func.func @forward() attributes {nn.checkpoint = ["layer1"]} {
  return
}

// -----

// nn.grad_accum: a count of micro-batches
// expected-error @+1 {{'nn.grad_accum' must be a positive i64 integer, got 0 : i64}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.grad_accum = 0 : i64} {
  return
}

// -----

// nn.parallel: not a parallel layout
// expected-error @+1 {{'nn.parallel' must be a parallel layout (#nn.parallel<dp = 8, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false>) on a function, got "dp=8"}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = "dp=8"} {
  return
}

// -----

// nn.parallel: no ranks
// expected-error @+1 {{parallel dp, fsdp, tp and pp must be >= 1, got dp = 0, fsdp = 1, tp = 1, pp = 1}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 0, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false>} {
  return
}

// -----

// nn.parallel: an empty bucket
// expected-error @+1 {{parallel bucket sizes must be >= 1 byte}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 0, first_bucket = 1048576, bucket_view = false>} {
  return
}

// -----

// nn.parallel: more ranks than modelled
// expected-error @+1 {{parallel dp x fsdp x tp x pp must be at most 262144 ranks, got dp = 1024, fsdp = 1024, tp = 1, pp = 1}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1024, fsdp = 1024, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false>} {
  return
}

// -----

// nn.parallel: an empty shard pattern
// expected-error @+1 {{parallel shard must be an array of non-empty module patterns}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1, fsdp = 4, shard = [""], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false>} {
  return
}

// -----

// nn.sharded: only on a parameter
// expected-error @+1 {{'nn.sharded' must be a unit attribute on an nn.param, got unit}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.sharded} {
  return
}

// -----

// nn.zero_grad: only on the nn.release that ends the gradients
func.func @step(%g: tensor<4xf32>) attributes {nn.mode = #nn<mode train>} {
  // expected-error @+1 {{'nn.zero_grad' must be a unit attribute on an nn.release, got unit}}
  "nn.keep_alive"(%g) {nn.zero_grad} : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @step(%g: tensor<4xf32>) attributes {nn.mode = #nn<mode train>} {
  // expected-error @+1 {{'nn.zero_grad' must be a unit attribute on an nn.release, got 1 : i64}}
  nn.release %g {nn.zero_grad = 1, phase = #nn<phase optimizer>} : tensor<4xf32>
  return
}

// -----

// nn.parallel: no tensor-parallel ranks
// expected-error @+1 {{parallel dp, fsdp, tp and pp must be >= 1, got dp = 1, fsdp = 1, tp = 0, pp = 1}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, tp = 0>} {
  return
}

// -----

// nn.parallel: dp x fsdp x tp past the ranks modelled
// expected-error @+1 {{parallel dp x fsdp x tp x pp must be at most 262144 ranks, got dp = 1024, fsdp = 1, tp = 1024, pp = 1}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1024, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, tp = 1024>} {
  return
}

// -----

// expected-error @+1 {{'nn.tensor_parallel' must be an i64 in [2, 262144] on a function, got 1 : i64}}
func.func @forward() attributes {nn.tensor_parallel = 1 : i64} {
  return
}

// -----

// nn.keep_output: the loop holding the output is a training step's
// expected-error @+1 {{'nn.keep_output' must be a unit attribute on a training step, got unit}}
func.func @step() attributes {nn.mode = #nn<mode inference>, nn.keep_output} {
  return
}

// -----

// nn.token_classifier (a token classifier's loss rule) is a unit attribute.
// expected-error @+1 {{'nn.token_classifier' must be a unit attribute, got 1 : i64}}
func.func @forward() attributes {nn.token_classifier = 1 : i64} {
  return
}

// -----

// nn.parallel: pipeline stages with another axis
// expected-error @+1 {{parallel pp is not combined with other axes yet}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, pp = 2>} {
  return
}

// -----

// nn.parallel: a stage past the pipeline's
// expected-error @+1 {{parallel pp_stage must be a stage of pp, and microbatches >= 1 and gpipe need pp > 1}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, pp = 2, microbatches = 4, pp_stage = 2>} {
  return
}

// -----

// nn.parallel: a schedule without a pipeline
// expected-error @+1 {{parallel pp_stage must be a stage of pp, and microbatches >= 1 and gpipe need pp > 1}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, gpipe>} {
  return
}

// -----

// nn.parallel: several stages a rank is ScheduleInterleaved1F1B, not GPipe
// (the looped ScheduleLoopedBFS is not modelled)
// expected-error @+1 {{parallel pp_stages_per_rank must be >= 1, more than 1 only with pp > 1 and without gpipe (interleaved 1F1B), got 2}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, pp = 2, microbatches = 2, gpipe, pp_stages_per_rank = 2>} {
  return
}

// -----

// nn.parallel: stages per rank without a pipeline
// expected-error @+1 {{parallel pp_stages_per_rank must be >= 1, more than 1 only with pp > 1 and without gpipe (interleaved 1F1B), got 2}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, pp_stages_per_rank = 2>} {
  return
}

// -----

// expected-error @+1 {{parallel pp_stages_per_rank must be >= 1, more than 1 only with pp > 1 and without gpipe (interleaved 1F1B), got 0}}
func.func @step() attributes {nn.mode = #nn<mode train>, nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, pp = 2, pp_stages_per_rank = 0>} {
  return
}
