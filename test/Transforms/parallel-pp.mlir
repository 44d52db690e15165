// vram-parallel pp=N: one stage's step under torch.distributed.pipelining.
// Three blocks `layers.0..2` (fc 8x8 each) split over two stages: layers.0
// and layers.1 on stage 0 (the earlier stage takes the extra block), and
// layers.2 with the head and the loss on stage 1.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-parallel="pp=2 microbatches=3 pp-stage=0" | FileCheck %s --check-prefix=S0
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-parallel="pp=2 microbatches=3 pp-stage=1" | FileCheck %s --check-prefix=S1
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-parallel="pp=2 microbatches=2 pp-schedule=gpipe pp-stage=1" | FileCheck %s --check-prefix=GPIPE
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-parallel="pp=2 microbatches=2" | FileCheck %s --check-prefix=WORST

// Stage 0 under 1F1B warms up with min(3, 2 - 0) = 2 forwards, then
// alternates: F0 F1 B0 F2 B1 B2. Each forward ends by sending its output
// (a warm-up forward's send is released after the next forward); each
// backward starts from the gradient stage 1 sends back. Only its own
// parameters are left, stepped from the first backward's gradients.
// S0-LABEL: func.func @step
// S0-SAME: nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, pp = 2, microbatches = 3>
// S0-SAME: nn.rank_peaks = array<i64:
// S0-NOT: nn.param "layers.2
// S0-NOT: nn.param "head
// S0: nn.linear %arg0
// S0: nn.relu
// S0: %[[O0:.*]] = nn.relu
// S0: nn.linear %arg0
// S0: nn.relu
// S0: %[[O1:.*]] = nn.relu
// S0-NEXT: nn.p2p_send %[[O0]] {peer = 1 : i64, phase = #nn<phase forward>}
// S0-NEXT: nn.p2p_send %[[O1]] {peer = 1 : i64, phase = #nn<phase forward>}
// S0-NEXT: %[[G0:.*]] = nn.p2p_recv {peer = 1 : i64, phase = #nn<phase backward>} : tensor<2x8xf32>
// S0-NEXT: nn.backward "nn.relu" saved(%[[O0]]) grads(%[[G0]])
// S0: nn.linear %arg0
// S0: nn.p2p_recv {peer = 1 : i64, phase = #nn<phase backward>}
// S0: nn.p2p_recv {peer = 1 : i64, phase = #nn<phase backward>}
// S0-NOT: nn.p2p_recv
// S0: nn.optimizer_step sgd
// S0-SAME: tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> ()
// S0: return
// S0-NEXT: }

// Stage 1 (the last) warms up with one forward: F0 B0 F1 B1 F2 B2. Each
// forward receives its input into a new buffer; the logits live until their
// backward; each received input until the schedule ends (the loss the
// schedule keeps holds its graph). Its backward sends the input's gradient
// to stage 0, released after the next backward.
// S1-LABEL: func.func @step
// S1-SAME: pp_stage = 1
// S1-NOT: nn.param "layers.0
// S1: %[[X0:.*]] = nn.p2p_recv {peer = 0 : i64, phase = #nn<phase forward>} : tensor<2x8xf32>
// S1-NEXT: nn.linear %[[X0]]
// S1: nn.mse_loss
// S1: %[[DX0:.*]]:3 = nn.backward "nn.linear" saved(%[[X0]],
// S1: nn.keep_alive %[[Y0:.*]] : tensor<2x4xf32>
// S1: %[[X1:.*]] = nn.p2p_recv {peer = 0 : i64, phase = #nn<phase forward>}
// S1: %[[DX1:.*]]:3 = nn.backward "nn.linear" saved(%[[X1]],
// S1: nn.keep_alive
// S1-NEXT: nn.p2p_send %[[DX0]]#0 {peer = 0 : i64, phase = #nn<phase backward>}
// S1: nn.p2p_send %[[DX1]]#0 {peer = 0 : i64, phase = #nn<phase backward>}
// S1: nn.p2p_send {{.*}} {peer = 0 : i64, phase = #nn<phase backward>}
// S1-NEXT: nn.keep_alive %[[X0]], %[[X1]], %{{.*}} : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
// S1: nn.optimizer_step sgd
// S1: return %{{.*}} : tensor<f32>

// GPipe: every forward, then every backward.
// GPIPE-LABEL: func.func @step
// GPIPE-SAME: gpipe, pp_stage = 1
// GPIPE: nn.p2p_recv {peer = 0 : i64, phase = #nn<phase forward>}
// GPIPE: nn.mse_loss
// GPIPE: nn.p2p_recv {peer = 0 : i64, phase = #nn<phase forward>}
// GPIPE: nn.mse_loss
// GPIPE: nn.backward "nn.mse_loss"
// GPIPE: nn.backward "nn.mse_loss"

// Without pp-stage the step is the stage's whose peak is highest; the
// peaks of both are listed (stage 0 holds two micro-batches' activations
// at its first backward).
// WORST: nn.parallel = #nn.parallel<{{.*}}, pp = 2, microbatches = 2>, nn.rank_peaks = array<i64: [[P0:[0-9]+]], [[P1:[0-9]+]]>
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w0 = nn.param "layers.0.fc.weight" : tensor<8x8xf32> loc("layers.0.fc")
  %b0 = nn.param "layers.0.fc.bias" : tensor<8xf32> loc("layers.0.fc")
  %h0 = nn.linear %x, %w0, %b0 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("layers.0.fc")
  %r0 = nn.relu %h0 : tensor<2x8xf32> loc("layers.0.act")
  %w1 = nn.param "layers.1.fc.weight" : tensor<8x8xf32> loc("layers.1.fc")
  %b1 = nn.param "layers.1.fc.bias" : tensor<8xf32> loc("layers.1.fc")
  %h1 = nn.linear %r0, %w1, %b1 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("layers.1.fc")
  %r1 = nn.relu %h1 : tensor<2x8xf32> loc("layers.1.act")
  %w2 = nn.param "layers.2.fc.weight" : tensor<8x8xf32> loc("layers.2.fc")
  %b2 = nn.param "layers.2.fc.bias" : tensor<8xf32> loc("layers.2.fc")
  %h2 = nn.linear %r1, %w2, %b2 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("layers.2.fc")
  %r2 = nn.relu %h2 : tensor<2x8xf32> loc("layers.2.act")
  %wh = nn.param "head.weight" : tensor<4x8xf32> loc("head")
  %y = nn.linear %r2, %wh : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32> loc("head")
  return %y : tensor<2x4xf32>
}
