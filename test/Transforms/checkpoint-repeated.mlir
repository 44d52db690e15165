// `*` alone checkpoints every repeated block, as people mean it (each
// element of the outermost ModuleList: `model.layers.*`, what
// gradient_checkpointing_enable() wraps): here `layers.0` and `layers.1`
// are recomputed, `head` (outside the list) is not; a model with no list
// checkpoints its top-level modules.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd" --vram-checkpoint="modules=*" | FileCheck %s

// CHECK-LABEL: func.func @step
// CHECK-NOT: recompute
// The head's backward node first, then each layer's two linears run again
// before its backward nodes (layers.1, then layers.0).
// CHECK: nn.backward "nn.linear" {{.*}} -> (tensor<2x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: nn.linear {{.*}} {nn.phase = #nn<phase recompute>} : (tensor<2x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT: nn.relu {{.*}} {nn.phase = #nn<phase recompute>}
// CHECK-NEXT: nn.linear {{.*}} {nn.phase = #nn<phase recompute>}
// CHECK: nn.backward "nn.linear" saved(%arg0)
// CHECK-SAME: forward_type = (tensor<2x8xf32>, tensor<8x8xf32>)
// CHECK-NOT: recompute
// CHECK: nn.optimizer_step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w0 = nn.param "layers.0.fc1.weight" : tensor<8x8xf32> loc("layers.0.fc1")
  %h0 = nn.linear %x, %w0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("layers.0.fc1")
  %r0 = nn.relu %h0 : tensor<2x8xf32> loc("layers.0.act")
  %v0 = nn.param "layers.0.fc2.weight" : tensor<8x8xf32> loc("layers.0.fc2")
  %y0 = nn.linear %r0, %v0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("layers.0.fc2")
  %w1 = nn.param "layers.1.fc1.weight" : tensor<8x8xf32> loc("layers.1.fc1")
  %h1 = nn.linear %y0, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("layers.1.fc1")
  %r1 = nn.relu %h1 : tensor<2x8xf32> loc("layers.1.act")
  %v1 = nn.param "layers.1.fc2.weight" : tensor<8x8xf32> loc("layers.1.fc2")
  %y1 = nn.linear %r1, %v1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("layers.1.fc2")
  %wh = nn.param "head.weight" : tensor<4x8xf32> loc("head")
  %o = nn.linear %y1, %wh : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32> loc("head")
  return %o : tensor<2x4xf32>
}

// -----

// No list: the top-level modules `a` and `b` are checkpointed (both
// recomputed), not the loss vram-build-step adds.
// CHECK-LABEL: func.func @step
// CHECK: = nn.cross_entropy
// CHECK-NOT: = nn.cross_entropy
// CHECK: nn.linear %{{.*}} {nn.phase = #nn<phase recompute>} : (tensor<2x8xf32>, tensor<4x8xf32>)
// CHECK: nn.linear %arg0, %{{.*}} {nn.phase = #nn<phase recompute>} : (tensor<2x8xf32>, tensor<8x8xf32>)
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "a.fc.weight" : tensor<8x8xf32> loc("a.fc")
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("a.fc")
  %r = nn.relu %h : tensor<2x8xf32> loc("a.act")
  %v = nn.param "b.fc.weight" : tensor<4x8xf32> loc("b.fc")
  %o = nn.linear %r, %v : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32> loc("b.fc")
  return %o : tensor<2x4xf32>
}

// -----

// torchvision's ViT names its blocks `encoder_layer_N` (a Sequential built
// from an OrderedDict): `encoder.layers.encoder_layer_*` is the repeated
// block, so each block's own relu is recomputed with its MLP (a Sequential
// inside the block, `mlp.0`, `mlp.1`, is not the list); the head, a leaf
// named `head_1`, is no block.
// CHECK-LABEL: func.func @step
// CHECK-NOT: recompute
// CHECK: nn.backward "nn.linear" {{.*}} -> (tensor<2x8xf32>, tensor<4x8xf32>)
// CHECK-NEXT: nn.relu {{.*}} {nn.phase = #nn<phase recompute>}
// CHECK-NEXT: nn.linear {{.*}} {nn.phase = #nn<phase recompute>} : (tensor<2x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT: nn.relu {{.*}} {nn.phase = #nn<phase recompute>}
// CHECK: nn.backward
// CHECK: nn.relu {{.*}} {nn.phase = #nn<phase recompute>}
// CHECK-NEXT: nn.linear {{.*}} {nn.phase = #nn<phase recompute>} : (tensor<2x8xf32>, tensor<8x8xf32>)
// CHECK-NEXT: nn.relu {{.*}} {nn.phase = #nn<phase recompute>}
// CHECK-NOT: recompute
// CHECK: nn.optimizer_step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %a0 = nn.relu %x : tensor<2x8xf32> loc("encoder.layers.encoder_layer_0.act")
  %w0 = nn.param "encoder.layers.encoder_layer_0.mlp.0.weight" : tensor<8x8xf32> loc("encoder.layers.encoder_layer_0.mlp.0")
  %h0 = nn.linear %a0, %w0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("encoder.layers.encoder_layer_0.mlp.0")
  %r0 = nn.relu %h0 : tensor<2x8xf32> loc("encoder.layers.encoder_layer_0.mlp.1")
  %a1 = nn.relu %r0 : tensor<2x8xf32> loc("encoder.layers.encoder_layer_1.act")
  %w1 = nn.param "encoder.layers.encoder_layer_1.mlp.0.weight" : tensor<8x8xf32> loc("encoder.layers.encoder_layer_1.mlp.0")
  %h1 = nn.linear %a1, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("encoder.layers.encoder_layer_1.mlp.0")
  %r1 = nn.relu %h1 : tensor<2x8xf32> loc("encoder.layers.encoder_layer_1.mlp.1")
  %wh = nn.param "head_1.weight" : tensor<4x8xf32> loc("head_1")
  %o = nn.linear %r1, %wh : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32> loc("head_1")
  return %o : tensor<2x4xf32>
}
