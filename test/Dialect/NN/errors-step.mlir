// Invalid nn.param, nn.buffer and training-step ops (nn.saved, nn.backward,
// nn.accumulate_grad, nn.optimizer_state, nn.optimizer_step): one invalid op
// per split.

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// param: empty name
func.func @f() {
  // expected-error @+1 {{'nn.param' op needs a non-empty name}}
  %0 = nn.param "" : tensor<4xf32>
  return
}

// -----

// param: integer tensor
func.func @f() {
  // expected-error @+1 {{'nn.param' op result #0 must be statically shaped tensor of floating-point values, but got 'tensor<4xi32>'}}
  %0 = nn.param "w" : tensor<4xi32>
  return
}

// -----

// param: trainable is a bool
func.func @f() {
  // expected-error @+1 {{custom op 'nn.param' 'nn.param' op attribute 'trainable' failed to satisfy constraint: bool attribute}}
  %0 = nn.param "w" {trainable} : tensor<4xf32>
  return
}

// -----

// param: missing name
func.func @f() {
  // expected-error @+1 {{expected attribute value}}
  %0 = nn.param : tensor<4xf32>
  return
}

// -----

// buffer: empty name
func.func @f() {
  // expected-error @+1 {{'nn.buffer' op needs a non-empty name}}
  %0 = nn.buffer "" : tensor<64xf32>
  return
}

// -----

// buffer: unranked tensor
func.func @f() {
  // expected-error @+1 {{custom op 'nn.buffer' invalid kind of type specified: expected builtin.tensor, but found 'tensor<*xf32>'}}
  %0 = nn.buffer "m" : tensor<*xf32>
  return
}

// -----

// saved: unranked result
func.func @f(%y: tensor<4xf32>) {
  // expected-error @+1 {{'nn.saved' op result #0 must be statically shaped tensor of any type values, but got 'tensor<*xi1>'}}
  %0 = nn.saved "mask" of "nn.dropout"(%y) {forward_attrs = {}} : (tensor<4xf32>) -> tensor<*xi1>
  return
}

// -----

// backward: grad_operands size differs from the results
func.func @f(%x: tensor<1x3x8x8xf32>, %gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op grad_operands has 2 entries for 1 results}}
  %0 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<operand 0>], grad_operands = array<i64: 0, 1>, param_grads = array<i1: false>, flop_counts = array<i64: 1, 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// backward: param_grads size differs from the results
func.func @f(%x: tensor<1x3x8x8xf32>, %gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op param_grads has 2 entries for 1 results}}
  %0 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<operand 0>], grad_operands = array<i64: 0>, param_grads = array<i1: false, true>, flop_counts = array<i64: 1, 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// backward: grad_results must mark one forward result per gradient
func.func @f(%x: tensor<2x12xf32>, %g0: tensor<2x4xf32>) {
  // expected-error @+1 {{'nn.backward' op grad_results must mark one forward result per gradient, of 3}}
  %0 = nn.backward "nn.split" saved() grads(%g0) {forward_attrs = {dim = 1 : i64, sizes = array<i64: 4, 4, 4>}, forward_type = (tensor<2x12xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>), saved_roles = [], grad_operands = array<i64: 0>, param_grads = array<i1: false>, flop_counts = array<i64: 0, 0, 0>, grad_results = array<i1: true, false, true>} : (tensor<2x4xf32>) -> tensor<2x12xf32>
  return
}

// -----

// backward: flop_counts needs three conventions
func.func @f(%x: tensor<1x3x8x8xf32>, %gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op flop_counts needs 3 entries (macs, flops, full)}}
  %0 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<operand 0>], grad_operands = array<i64: 0>, param_grads = array<i1: false>, flop_counts = array<i64: 1, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// backward: a workspace allocation of 0 bytes (the builder leaves those out)
func.func @f(%x: tensor<1x3x8x8xf32>, %gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op workspace sizes must be positive}}
  %0 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<operand 0>], grad_operands = array<i64: 0>, param_grads = array<i1: false>, flop_counts = array<i64: 1, 2, 2>, workspace = array<i64: 64, 0>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// backward: missing flop_counts
func.func @f(%gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op requires attribute 'flop_counts'}}
  nn.backward "nn.relu" saved() grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [], grad_operands = array<i64>, param_grads = array<i1>} : (tensor<1x4x6x6xf32>) -> ()
  return
}

// -----

// backward: integer gradient
func.func @f(%gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op result #0 must be variadic of statically shaped tensor of floating-point values, but got 'tensor<1x4x6x6xi32>'}}
  %0 = nn.backward "nn.relu" saved() grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [], grad_operands = array<i64: 0>, param_grads = array<i1: false>, flop_counts = array<i64: 0, 0, 0>} : (tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xi32>
  return
}

// -----

// accumulate_grad: result type differs from the accumulator (generic form)
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.accumulate_grad' op failed to verify that all of {accumulator, result} have same type}}
  %0 = "nn.accumulate_grad"(%a, %b) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

// accumulate_grad: integer addend
func.func @f(%a: tensor<4x8xf32>, %b: tensor<4x8xi32>) {
  // expected-error @+1 {{'nn.accumulate_grad' op operand #1 must be statically shaped tensor of floating-point values, but got 'tensor<4x8xi32>'}}
  %0 = nn.accumulate_grad %a, %b : tensor<4x8xf32>, tensor<4x8xi32>
  return
}

// -----

// optimizer_state: Adam's state has the parameter's type (torch.optim)
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>) {
  %m = nn.optimizer_state exp_avg of %p : tensor<4xf32> -> tensor<4xf16>
  %v = nn.optimizer_state exp_avg_sq of %p : tensor<4xf32> -> tensor<4xf32>
  // expected-error @+1 {{'nn.optimizer_step' op state 0 should be exp_avg of type 'tensor<4xf32>' for parameter type 'tensor<4xf32>', got exp_avg of type 'tensor<4xf16>'}}
  nn.optimizer_step adam foreach params(%p) grads(%g) state(%m, %v) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: unknown optimizer
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{expected ::vram::nn::OptimizerKind to be one of: sgd, momentum, adam, adamw, sgd_nesterov, adafactor, lion, adamw8bit}}
  // expected-error @+1 {{failed to parse NN_OptimizerKindAttr parameter 'value'}}
  nn.optimizer_step lamb foreach params(%p) grads(%g) state() : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: unknown implementation
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+2 {{expected ::vram::nn::OptimizerImpl to be one of: foreach, fused, for_loop}}
  // expected-error @+1 {{failed to parse NN_OptimizerImplAttr parameter 'value'}}
  nn.optimizer_step sgd vectorized params(%p) grads(%g) state() : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: one gradient per parameter
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op needs one gradient per parameter}}
  nn.optimizer_step sgd foreach params(%p, %p) grads(%g) state() : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: adam needs two states per parameter
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op needs exp_avg_sq of type 'tensor<4xf32>' for parameter type 'tensor<4xf32>' (state tensors run out)}}
  nn.optimizer_step adam fused params(%p) grads(%g) state(%m) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: sgd keeps no state
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op has 1 more state tensor(s) than sgd keeps for its parameters}}
  nn.optimizer_step sgd for_loop params(%p) grads(%g) state(%m) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: momentum needs one state per parameter
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op needs momentum_buffer of type 'tensor<4xf32>' for parameter type 'tensor<4xf32>' (state tensors run out)}}
  nn.optimizer_step momentum foreach params(%p, %p) grads(%g, %g) state(%m) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: gradient type differs from the parameter
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf16>) {
  // expected-error @+1 {{'nn.optimizer_step' op gradient type 'tensor<4xf16>' does not match parameter type 'tensor<4xf32>'}}
  nn.optimizer_step sgd foreach params(%p) grads(%g) state() : (tensor<4xf32>, tensor<4xf16>) -> ()
  return
}

// -----

// optimizer_step: gradient shape differs from the parameter
func.func @f(%p: tensor<4xf32>, %g: tensor<2x2xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op gradient type 'tensor<2x2xf32>' does not match parameter type 'tensor<4xf32>'}}
  nn.optimizer_step sgd foreach params(%p) grads(%g) state() : (tensor<4xf32>, tensor<2x2xf32>) -> ()
  return
}

// -----

// optimizer_step: state type differs from its parameter
func.func @f(%p: tensor<4xf32>, %q: tensor<8xf32>, %m: tensor<4xf32>, %n: tensor<8xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op state 0 should be momentum_buffer of type 'tensor<4xf32>' for parameter type 'tensor<4xf32>', got a value of type 'tensor<8xf32>'}}
  nn.optimizer_step momentum foreach params(%p, %q) grads(%p, %q) state(%n, %m) : (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: adam states are grouped by parameter
func.func @f(%p: tensor<4xf32>, %q: tensor<8xf32>, %m: tensor<4xf32>, %n: tensor<8xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op state 1 should be exp_avg_sq of type 'tensor<4xf32>' for parameter type 'tensor<4xf32>', got a value of type 'tensor<8xf32>'}}
  nn.optimizer_step adam foreach params(%p, %q) grads(%p, %q) state(%m, %n, %m, %n) : (tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>) -> ()
  return
}

// -----

// optimizer_step: weight_decay is an f64
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'nn.optimizer_step' 'nn.optimizer_step' op attribute 'weight_decay' failed to satisfy constraint: 64-bit float attribute}}
  nn.optimizer_step sgd foreach params(%p) grads(%g) state() {weight_decay = 1 : i64} : (tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// backward: a saved tensor whose type does not match its role
func.func @f(%x: tensor<1x3x8x8xf32>, %gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op saved tensor of type 'tensor<1x3x8x8xf32>' does not match its role #nn.saved<operand 1> ('tensor<4x3x3x3xf32>')}}
  %0 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<operand 1>], grad_operands = array<i64: 0>, param_grads = array<i1: false>, flop_counts = array<i64: 1, 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// backward: one role per saved tensor
func.func @f(%x: tensor<1x3x8x8xf32>, %gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op saved_roles has 0 entries for 1 saved tensors}}
  %0 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [], grad_operands = array<i64: 0>, param_grads = array<i1: false>, flop_counts = array<i64: 1, 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// backward: a role out of the forward op's range
func.func @f(%x: tensor<1x3x8x8xf32>, %gy: tensor<1x4x6x6xf32>) {
  // expected-error @+1 {{'nn.backward' op saved role #nn.saved<result 3> is out of range for forward type}}
  %0 = nn.backward "nn.conv2d" saved(%x) grads(%gy) {forward_attrs = {}, forward_type = (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>, saved_roles = [#nn.saved<result 3>], grad_operands = array<i64: 0>, param_grads = array<i1: false>, flop_counts = array<i64: 1, 2, 2>} : (tensor<1x3x8x8xf32>, tensor<1x4x6x6xf32>) -> tensor<1x3x8x8xf32>
  return
}

// -----

// the step's dialect attributes are verified
// expected-error @+1 {{'nn.mode' must be a step mode (#nn<mode train>), got "train"}}
func.func @f() attributes {nn.mode = "train"} {
  return
}

// -----

// expected-error @+1 {{unknown nn dialect attribute 'nn.bogus'}}
func.func @f() attributes {nn.bogus} {
  return
}

// -----

// nn.batch must fit the i64 it is read as (2^64 + 5 was read as 5).
// expected-error @+1 {{'nn.batch' must be a positive i64 integer, got 18446744073709551621 : i128}}
func.func @f(%x: tensor<5x4xf32>) attributes {nn.batch = 18446744073709551621 : i128} {
  return
}

// -----

// nn.batch is the leading dimension of an input.
// expected-error @+1 {{'nn.batch' is 64 but no input has a dimension of that size (input shapes: [2, 4], [3])}}
func.func @f(%x: tensor<2x4xf32>, %y: tensor<3xi64>) attributes {nn.batch = 64 : i64} {
  return
}

// -----

// grad_bucket: a bucket is flat
func.func @f() {
  // expected-error @+1 {{'nn.grad_bucket' op is a flat (rank-1) tensor, got 'tensor<2x3xf32>'}}
  %0 = nn.grad_bucket "ddp.bucket0" params ["w"] : tensor<2x3xf32>
  return
}

// -----

// grad_bucket: it holds some gradient
func.func @f() {
  // expected-error @+1 {{'nn.grad_bucket' op holds the gradients of at least one parameter}}
  %0 = nn.grad_bucket "ddp.bucket0" params [] : tensor<6xf32>
  return
}

// -----

// grad_bucket: it has a name
func.func @f() {
  // expected-error @+1 {{'nn.grad_bucket' op needs a non-empty name}}
  %0 = nn.grad_bucket "" params ["w"] : tensor<6xf32>
  return
}

// -----

// zero_flat_params: every element of its parameters
func.func @f() {
  %w = nn.param "w" : tensor<4x4xf32>
  // expected-error @+1 {{'nn.zero_flat_params' op holds at least one parameter and all their elements, got 16 elements in 'tensor<12xf32>'}}
  %0 = nn.zero_flat_params %w : (tensor<4x4xf32>) -> tensor<12xf32>
  return
}

// -----

// zero_flat_params: one element type
func.func @f() {
  %w = nn.param "w" : tensor<4x4xbf16>
  // expected-error @+1 {{'nn.zero_flat_params' op flattens parameters of its own element type, got 'tensor<4x4xbf16>'}}
  %0 = nn.zero_flat_params %w : (tensor<4x4xbf16>) -> tensor<16xf32>
  return
}

// -----

// zero_partition: 1/ranks of the flat buffer, in f32
func.func @f() {
  %w = nn.param "w" : tensor<4x4xf32>
  %0 = nn.zero_flat_params %w : (tensor<4x4xf32>) -> tensor<16xf32>
  // expected-error @+1 {{'nn.zero_partition' op is a 1/ranks slice of the flat parameters in f32, got 'tensor<4xf32>' of 'tensor<16xf32>' over 2 ranks}}
  %1 = nn.zero_partition %0 {ranks = 2 : i64} : tensor<16xf32> -> tensor<4xf32>
  return
}

// -----

// zero_flat_params with ranks (ZeRO-3): ceil(n / ranks) of each parameter
func.func @f() {
  %w = nn.param "w" : tensor<5x3xf32>
  %b = nn.param "b" : tensor<5xf32>
  // expected-error @+1 {{'nn.zero_flat_params' op holds ceil(n / ranks) elements of each parameter, 11, got 'tensor<10xf32>'}}
  %0 = nn.zero_flat_params %w, %b {ranks = 2 : i64} : (tensor<5x3xf32>, tensor<5xf32>) -> tensor<10xf32>
  return
}

// -----

// zero_flat_params: ranks >= 1
func.func @f() {
  %w = nn.param "w" : tensor<4x4xf32>
  // expected-error @+1 {{'nn.zero_flat_params' op needs 1 <= ranks <= 262144, got 0}}
  %0 = nn.zero_flat_params %w {ranks = 0 : i64} : (tensor<4x4xf32>) -> tensor<16xf32>
  return
}

// -----

// zero_buffer: the buffers ZeRO allocates
func.func @f() {
  // expected-error @+1 {{'nn.zero_buffer' op is ipg_buffer, grads_in_partition, reduce_scatter_flat, accumulated_grad, accumulated_grads_in_partition, flat_grad_partition or single_grad_partition, got 'bucket'}}
  %0 = nn.zero_buffer "bucket" {phase = #nn<phase backward>} : tensor<16xf32>
  return
}

// -----

// zero_buffer: only single_grad_partition copies a source
func.func @f(%g: tensor<16xf32>) {
  // expected-error @+1 {{'nn.zero_buffer' op has no source}}
  %0 = nn.zero_buffer "ipg_buffer" %g : tensor<16xf32> {phase = #nn<phase backward>} : tensor<16xf32>
  return
}

// -----

// zero_reduce: within its bucket
func.func @f(%b: tensor<16xf32>) {
  // expected-error @+1 {{'nn.zero_reduce' op reduces between 1 and all elements of its bucket, got 17}}
  nn.zero_reduce %b {elements = 17 : i64, flatten = true, phase = #nn<phase backward>} : tensor<16xf32>
  return
}

// -----

// parallel: ZeRO is stage 1, 2 or 3 over dp alone
// expected-error @+1 {{parallel zero must be a ZeRO stage 1, 2 or 3 (0: none), got 4}}
func.func @f() attributes {nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, zero = 4>} {
  return
}

// -----

// expected-error @+1 {{parallel zero partitions over dp alone, got fsdp = 2, tp = 1}}
func.func @f() attributes {nn.parallel = #nn.parallel<dp = 1, fsdp = 2, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, zero = 2>} {
  return
}

// -----

// expected-error @+1 {{parallel zero_rank must be a dp rank, got 2}}
func.func @f() attributes {nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, zero = 2, zero_rank = 2>} {
  return
}

// -----

// expected-error @+1 {{parallel overlap_comm is ZeRO's: it needs zero}}
func.func @f() attributes {nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, overlap_comm>} {
  return
}

// -----

// expected-error @+1 {{expected tp, zero, reduce_bucket, zero_rank, overlap_comm, pp, microbatches, gpipe, pp_stage or pp_stages_per_rank, got 'stage'}}
func.func @f() attributes {nn.parallel = #nn.parallel<dp = 2, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, stage = 2>} {
  return
}

// -----

// optimizer_step: bitsandbytes runs a kernel per parameter (no foreach)
func.func @f(%p: tensor<4xf32>, %g: tensor<4xf32>, %m: tensor<4xf32>) {
  // expected-error @+1 {{'nn.optimizer_step' op lion has no foreach implementation}}
  nn.optimizer_step lion foreach params(%p) grads(%g) state(%m) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> ()
  return
}

// -----

// optimizer_step: Adafactor factors a matrix's second moment (row_var
// [R, 1], col_var [1, C]), not a parameter-shaped one
func.func @f(%p: tensor<4x8xf32>, %g: tensor<4x8xf32>) {
  %v = nn.optimizer_state variance of %p : tensor<4x8xf32> -> tensor<4x8xf32>
  // expected-error @+1 {{'nn.optimizer_step' op state 0 should be row_var of type 'tensor<4x1xf32>' for parameter type 'tensor<4x8xf32>', got variance of type 'tensor<4x8xf32>'}}
  nn.optimizer_step adafactor for_loop params(%p) grads(%g) state(%v) : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> ()
  return
}

// -----

// optimizer_step: 8-bit AdamW keeps 32-bit state below 4096 elements
func.func @f(%p: tensor<64xbf16>, %g: tensor<64xbf16>) {
  %m = nn.optimizer_state exp_avg of %p : tensor<64xbf16> -> tensor<64xui8>
  // expected-error @+1 {{'nn.optimizer_step' op state 0 should be exp_avg of type 'tensor<64xf32>' for parameter type 'tensor<64xbf16>', got exp_avg of type 'tensor<64xui8>'}}
  nn.optimizer_step adamw8bit for_loop params(%p) grads(%g) state(%m) : (tensor<64xbf16>, tensor<64xbf16>, tensor<64xui8>) -> ()
  return
}

// -----

func.func @all_reduce_over_one_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.all_reduce' op needs 2 <= ranks <= 262144, got 1}}
  %y = nn.all_reduce %x {ranks = 1 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @all_reduce_grad_over_no_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.all_reduce_grad' op needs 2 <= ranks <= 262144, got 0}}
  %y = nn.all_reduce_grad %x {ranks = 0 : i64} : tensor<2x8xf32>
  return
}

// -----

func.func @all_gather_output_over_one_rank(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.all_gather_output' op needs 2 <= ranks <= 262144, got 1}}
  %y = nn.all_gather_output %x {ranks = 1 : i64} : tensor<2x8xf32> -> tensor<2x8xf32>
  return
}

// -----

func.func @all_gather_output_wrong_width(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.all_gather_output' op the whole tensor must be the shard with its last dim times 2, 'tensor<2x16xf32>', got 'tensor<4x8xf32>'}}
  %y = nn.all_gather_output %x {ranks = 2 : i64} : tensor<2x8xf32> -> tensor<4x8xf32>
  return
}

// -----

func.func @all_gather_output_of_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'nn.all_gather_output' op shards a dim: the tensor needs one}}
  %y = nn.all_gather_output %x {ranks = 2 : i64} : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @split_input_wrong_width(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{'nn.split_input' op the whole tensor must be the shard with its last dim times 4, 'tensor<2x12xf32>', got 'tensor<2x8xf32>'}}
  %y = nn.split_input %x {ranks = 4 : i64} : tensor<2x8xf32> -> tensor<2x3xf32>
  return
}

// -----

func.func @all_gather_output_dim_out_of_range(%x: tensor<2x2x8xf32>) {
  // expected-error @+1 {{'nn.all_gather_output' op dim 3 is out of range for a tensor of rank 3}}
  %y = nn.all_gather_output %x {dim = 3 : i64, ranks = 2 : i64} : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
  return
}

// -----

func.func @split_input_wrong_sequence(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'nn.split_input' op the whole tensor must be the shard with dim 1 times 2, 'tensor<2x6x8xf32>', got 'tensor<2x4x8xf32>'}}
  %y = nn.split_input %x {dim = 1 : i64, ranks = 2 : i64} : tensor<2x4x8xf32> -> tensor<2x3x8xf32>
  return
}

// -----

func.func @reduce_scatter_output_negative_dim(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'nn.reduce_scatter_output' op needs dim >= 0, got -1}}
  %y = nn.reduce_scatter_output %x {dim = -1 : i64, ranks = 2 : i64} : tensor<2x4x8xf32> -> tensor<2x4x4xf32>
  return
}

// -----

func.func @reduce_scatter_output_wrong_sequence(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'nn.reduce_scatter_output' op the whole tensor must be the shard with dim 1 times 2, 'tensor<2x6x8xf32>', got 'tensor<2x4x8xf32>'}}
  %y = nn.reduce_scatter_output %x {dim = 1 : i64, ranks = 2 : i64} : tensor<2x4x8xf32> -> tensor<2x3x8xf32>
  return
}

// -----

func.func @reduce_scatter_output_over_one_rank(%x: tensor<2x4x8xf32>) {
  // expected-error @+1 {{'nn.reduce_scatter_output' op needs 2 <= ranks <= 262144, got 1}}
  %y = nn.reduce_scatter_output %x {dim = 1 : i64, ranks = 1 : i64} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return
}
