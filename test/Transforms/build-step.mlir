// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adam" | FileCheck %s --check-prefix=ADAM
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=inference" | FileCheck %s --check-prefix=INFER
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd implementation=for-loop" | FileCheck %s --check-prefix=SGD

// A conv -> bn -> relu_ -> maxpool -> linear classifier.
// ADAM-LABEL: func.func @step(%arg0: tensor<2x3x8x8xf32>, %arg1: tensor<2xi64>) -> tensor<f32> attributes {nn.device = "cuda", nn.mode = #nn<mode train>, nn.optimizer = #nn.optimizer_config<adam, foreach, weight_decay = 0.000000e+00>, nn.torch_version = "2"}
// ADAM: %[[W:.*]] = nn.param "conv.weight"
// ADAM-NEXT: nn.optimizer_state exp_avg of %[[W]]
// ADAM-NEXT: nn.optimizer_state exp_avg_sq of %[[W]]
// ADAM: %[[Y:.*]] = nn.conv2d %arg0, %[[W]]
// ADAM: %[[BN:.*]] = nn.batch_norm %[[Y]]
// The extra tensors are computed from the forward op's operands and result.
// ADAM-NEXT: %[[MEAN:.*]] = nn.saved "save_mean" of "nn.batch_norm"(%[[Y]], {{.*}}, %[[BN]]) {forward_attrs = {{{.*}}momentum = 1.000000e-01 : f64{{.*}}}} : ({{.*}}) -> tensor<4xf32>
// ADAM-NEXT: %[[INVSTD:.*]] = nn.saved "save_invstd" of "nn.batch_norm"(%[[Y]], {{.*}}, %[[BN]])
// ADAM-NEXT: %[[R:.*]] = nn.relu %[[BN]] {inplace}
// ADAM-NEXT: %[[P:.*]] = nn.max_pool2d %[[R]]
// ADAM-NEXT: %[[IDX:.*]] = nn.saved "indices" of "nn.max_pool2d"(%[[R]], %[[P]]) {{.*}} : (tensor<2x4x8x8xf32>, tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xi64>
// p = 0 is the identity: the dropout result aliases its input, nothing saved.
// ADAM-NEXT: %[[D:.*]] = nn.dropout %[[P]]
// ADAM-NEXT: %[[F:.*]] = nn.flatten %[[D]]
// ADAM: %[[O:.*]] = nn.linear %[[F]]
// ADAM-NEXT: %[[L:.*]] = nn.cross_entropy %[[O]], %arg1
// ADAM-NEXT: %[[LP:.*]] = nn.saved "log_probs" of "nn.cross_entropy"(%[[O]], %arg1, %[[L]])
// ADAM-NEXT: %[[GO:.*]] = nn.backward "nn.cross_entropy" saved(%[[LP]], %arg1) grads()
// ADAM-NEXT: %[[GL:.*]]:3 = nn.backward "nn.linear" saved(%[[F]], %{{.*}}) grads(%[[GO]])
// The flatten's gradient is a view of the linear's input gradient: no node.
// ADAM-NEXT: %[[GP:.*]] = nn.backward "nn.max_pool2d" saved(%[[R]], %[[IDX]]) grads(%[[GL]]#0)
// ADAM-NEXT: %[[GR:.*]] = nn.backward "nn.relu" saved(%[[R]]) grads(%[[GP]])
// ADAM-NEXT: %[[GBN:.*]]:3 = nn.backward "nn.batch_norm" saved(%[[Y]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[MEAN]], %[[INVSTD]]) grads(%[[GR]])
// The image does not require grad: only the weight gradient.
// The node knows its forward op: attributes, type and what each saved tensor is.
// ADAM-NEXT: %[[GW:.*]] = nn.backward "nn.conv2d" saved(%arg0, %[[W]]) grads(%[[GBN]]#0) {{{.*}}forward_attrs = {dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1>, strides = array<i64: 1, 1>}, forward_type = (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>, grad_operands = array<i64: 1>, param_grads = array<i1: true>, saved_roles = [#nn.saved<operand 0>, #nn.saved<operand 1>]}
// ADAM-NEXT: nn.optimizer_step adam foreach params(%[[W]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) grads(%[[GW]], %[[GBN]]#1, %[[GBN]]#2, %[[GL]]#1, %[[GL]]#2)
// zero_grad(set_to_none=True) drops the gradients after the update.
// ADAM-NEXT: nn.release %[[GW]], %[[GBN]]#1, %[[GBN]]#2, %[[GL]]#1, %[[GL]]#2 {nn.zero_grad, phase = #nn<phase optimizer>}
// ADAM-NEXT: return %[[L]] : tensor<f32>

// INFER-LABEL: func.func @step(%arg0: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> attributes {nn.device = "cuda", nn.mode = #nn<mode inference>, nn.torch_version = "2"}
// INFER-NOT: nn.backward
// INFER-NOT: nn.saved
// INFER-NOT: nn.dropout
// INFER: return

// SGD-LABEL: func.func @step
// SGD-NOT: nn.optimizer_state
// SGD-COUNT-5: nn.optimizer_step sgd for_loop params(%{{[0-9]+}}) grads(%{{[0-9#]+}}) state()
func.func @forward(%x: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> {
  %w = nn.param "conv.weight" : tensor<4x3x3x3xf32>
  %y = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x8x8xf32>
  %g = nn.param "bn.weight" : tensor<4xf32>
  %b = nn.param "bn.bias" : tensor<4xf32>
  %m = nn.buffer "bn.running_mean" : tensor<4xf32>
  %v = nn.buffer "bn.running_var" : tensor<4xf32>
  %n = nn.batch_norm %y weight %g bias %b stats %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %r = nn.relu %n {inplace} : tensor<2x4x8x8xf32>
  %p = nn.max_pool2d %r {kernel_size = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  %d = nn.dropout %p {p = 0.0 : f64} : tensor<2x4x4x4xf32>
  %f = nn.flatten %d : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
  %fw = nn.param "fc.weight" : tensor<10x64xf32>
  %fb = nn.param "fc.bias" : tensor<10xf32>
  %o = nn.linear %f, %fw, %fb : (tensor<2x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<2x10xf32>
  return %o : tensor<2x10xf32>
}

// -----

// A residual block: the input's gradient comes from two users and is
// accumulated; add hands its output gradient to both operands unchanged.
// ADAM-LABEL: func.func @step(%arg0: tensor<2x8xf32>
// ADAM-NOT: nn.backward "nn.add"
// ADAM: %[[GO:.*]] = nn.backward "nn.cross_entropy"
// ADAM-NEXT: %[[G2:.*]]:2 = nn.backward "nn.linear" saved(%{{.*}}, %{{.*}}) grads(%[[GO]])
// The buffer is shared by both operands of the add: accumulated out of place.
// ADAM-NEXT: %[[ACC:.*]] = nn.accumulate_grad %[[GO]], %[[G2]]#0 : tensor
// ADAM-NEXT: nn.backward "nn.linear" saved(%arg0) grads(%[[ACC]])
// SGD-LABEL: func.func @step(%arg0: tensor<2x8xf32>
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w1 = nn.param "l1.weight" : tensor<8x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %w2 = nn.param "l2.weight" : tensor<8x8xf32>
  %h2 = nn.linear %h, %w2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %s = nn.add %h2, %h : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
// INFER-LABEL: func.func @step(%arg0: tensor<2x8xf32>) -> tensor<2x8xf32>

