// vram-parallel pp=2 pp-schedule=interleaved-1f1b: one rank's step under
// ScheduleInterleaved1F1B. Four blocks `layers.0..3` (fc 8x8 each) are four
// stages, two a rank: rank 0 holds stages 0 and 2, rank 1 stages 1 and 3
// (with the head and the loss). Rank 1's actions over 2 micro-batches, as
// torch 2.15 lowers them (benchmarks/accuracy/pp_schedules.py, results/
// pp-schedules-torch-2.15.0.txt, line "2 2 2 1"; FSDP's and the
// gradients' slots left out):
//   1RECV_F0 1F0 1SEND_F0 1RECV_F1 1F1 1SEND_F1 3RECV_F0 3F0 3RECV_F1 3B0
//   3SEND_B0 1RECV_B0 3F1 3B1 3SEND_B1 1RECV_B1 1B0 1WAIT_SEND_F0 1SEND_B0
//   1B1 1WAIT_SEND_F1 1SEND_B1 3WAIT_SEND_B0 3WAIT_SEND_B1 1WAIT_SEND_B0
//   1WAIT_SEND_B1
// A receive is a new buffer where the action lists it; a send's tensor
// lives until its wait (nn.p2p_send stands at the wait): stage 1's output
// until its backward is done, every backward send until the end.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-parallel="pp=2 pp-schedule=interleaved-1f1b microbatches=2 pp-stage=1" | FileCheck %s --check-prefix=R1
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-parallel="pp=2 pp-schedule=interleaved-1f1b microbatches=2" | FileCheck %s --check-prefix=WORST

// R1-LABEL: func.func @step
// R1-SAME: nn.parallel = #nn.parallel<dp = 1, fsdp = 1, shard = [], bucket_cap = 26214400, first_bucket = 1048576, bucket_view = false, pp = 2, microbatches = 2, pp_stage = 1, pp_stages_per_rank = 2>
// R1-NOT: nn.param "layers.0
// R1-NOT: nn.param "layers.2
// 1RECV_F0 1F0, 1RECV_F1 1F1
// R1: %[[X10:.*]] = nn.p2p_recv {peer = 0 : i64, phase = #nn<phase forward>} : tensor<2x8xf32>
// R1-NEXT: %[[Y10:.*]] = nn.linear %[[X10]]
// R1-NEXT: %[[X11:.*]] = nn.p2p_recv {peer = 0 : i64, phase = #nn<phase forward>} : tensor<2x8xf32>
// R1-NEXT: %[[Y11:.*]] = nn.linear %[[X11]]
// 3RECV_F0 3F0 3RECV_F1
// R1-NEXT: %[[X30:.*]] = nn.p2p_recv {peer = 2 : i64, phase = #nn<phase forward>} : tensor<2x8xf32>
// R1-NEXT: nn.linear %[[X30]]
// R1: nn.mse_loss
// R1: %[[X31:.*]] = nn.p2p_recv {peer = 2 : i64, phase = #nn<phase forward>} : tensor<2x8xf32>
// 3B0 (its input's gradient kept for the send at the end), 1RECV_B0, 3F1
// R1: nn.backward "nn.mse_loss"
// R1: %[[DX30:.*]]:3 = nn.backward "nn.linear" saved(%[[X30]],
// R1: %[[G10:.*]] = nn.p2p_recv {peer = 2 : i64, phase = #nn<phase backward>} : tensor<2x8xf32>
// R1-NEXT: nn.linear %[[X31]]
// 3B1, 1RECV_B1
// R1: %[[DX31:.*]]:3 = nn.backward "nn.linear" saved(%[[X31]],
// R1: %[[G11:.*]] = nn.p2p_recv {peer = 2 : i64, phase = #nn<phase backward>} : tensor<2x8xf32>
// 1B0 1WAIT_SEND_F0, 1B1 1WAIT_SEND_F1
// R1: %[[DX10:.*]]:3 = nn.backward "nn.linear" saved(%[[X10]], {{.*}} grads(%[[G10]])
// R1: nn.p2p_send %[[Y10]] {peer = 2 : i64, phase = #nn<phase forward>}
// R1: %[[DX11:.*]]:3 = nn.backward "nn.linear" saved(%[[X11]], {{.*}} grads(%[[G11]])
// R1: nn.p2p_send %[[Y11]] {peer = 2 : i64, phase = #nn<phase forward>}
// The backward sends, waited for at the end in the order sent.
// R1-NEXT: nn.p2p_send %[[DX30]]#0 {peer = 2 : i64, phase = #nn<phase backward>}
// R1-NEXT: nn.p2p_send %[[DX31]]#0 {peer = 2 : i64, phase = #nn<phase backward>}
// R1-NEXT: nn.p2p_send %[[DX10]]#0 {peer = 0 : i64, phase = #nn<phase backward>}
// R1-NEXT: nn.p2p_send %[[DX11]]#0 {peer = 0 : i64, phase = #nn<phase backward>}
// The last stage's received inputs live until the step ends; the
// optimizer steps both stages' parameters.
// R1-NEXT: nn.keep_alive %[[X30]], %[[X31]] : tensor<2x8xf32>, tensor<2x8xf32>
// R1: nn.optimizer_step sgd
// R1-SAME: tensor<8x8xf32>, tensor<8xf32>, tensor<8x8xf32>, tensor<8xf32>, tensor<4x8xf32>) -> ()
// R1: return %{{.*}} : tensor<f32>

// Without pp-stage the step is the rank's whose peak is highest, the
// peaks of both ranks listed.
// WORST: nn.parallel = #nn.parallel<{{.*}}, pp = 2, microbatches = 2{{.*}}pp_stages_per_rank = 2>, nn.rank_peaks = array<i64: {{[0-9]+}}, {{[0-9]+}}>
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w0 = nn.param "layers.0.fc.weight" : tensor<8x8xf32> loc("layers.0.fc")
  %b0 = nn.param "layers.0.fc.bias" : tensor<8xf32> loc("layers.0.fc")
  %h0 = nn.linear %x, %w0, %b0 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("layers.0.fc")
  %w1 = nn.param "layers.1.fc.weight" : tensor<8x8xf32> loc("layers.1.fc")
  %b1 = nn.param "layers.1.fc.bias" : tensor<8xf32> loc("layers.1.fc")
  %h1 = nn.linear %h0, %w1, %b1 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("layers.1.fc")
  %w2 = nn.param "layers.2.fc.weight" : tensor<8x8xf32> loc("layers.2.fc")
  %b2 = nn.param "layers.2.fc.bias" : tensor<8xf32> loc("layers.2.fc")
  %h2 = nn.linear %h1, %w2, %b2 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("layers.2.fc")
  %w3 = nn.param "layers.3.fc.weight" : tensor<8x8xf32> loc("layers.3.fc")
  %b3 = nn.param "layers.3.fc.bias" : tensor<8xf32> loc("layers.3.fc")
  %h3 = nn.linear %h2, %w3, %b3 : (tensor<2x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x8xf32> loc("layers.3.fc")
  %wh = nn.param "head.weight" : tensor<4x8xf32> loc("head")
  %y = nn.linear %h3, %wh : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32> loc("head")
  return %y : tensor<2x4xf32>
}
