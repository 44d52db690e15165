// What autograd hands back as views, and what follows for the sums of a
// value's gradients (torch/csrc/autograd/input_buffer.cpp): the engine adds
// a value's next gradient into the first one in place only when it holds
// the only reference to it and to its storage, so a first gradient that is
// a view (F.linear's weight gradient is TBackward's grad.t(); the >2-D
// input it folds gets ViewBackward's reshape) or a pass-through is summed
// out of place into a new tensor, and the later ones into that in place.
// Measured with torch 2.15 on the CPU (benchmarks/accuracy/grad_sums.py ->
// results/grad-sums-torch-2.15.0-cpu.json: the profiler's aten::add, then
// aten::add_ for the later sums): a weight read by five F.linear calls, a
// [2, 8, 64] input read by three, a GRU's weight_hh over four steps, a
// tied embedding's weight, torch.matmul's operands that are not 2-D (unless
// their batch is broadcast: ExpandBackward sums into a new tensor); a
// [16, 64] input read by three linears, or a 2-D matmul operand, is added
// into in place from the first sum.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse" | FileCheck %s
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=MEM

// One weight, three linears (a GRU's weight_hh over three steps):
// the first sum is a new tensor, the second adds into it.
// CHECK-LABEL: func.func @step
// CHECK: %[[G3:.*]]:2 = nn.backward "nn.linear"
// CHECK-NEXT: %[[G2:.*]]:2 = nn.backward "nn.linear"
// CHECK-NEXT: %[[SUM:.*]] = nn.accumulate_grad %[[G3]]#1, %[[G2]]#1 : tensor<8x8xf32>, tensor<8x8xf32>
// CHECK-NEXT: %[[G1:.*]] = nn.backward "nn.linear"
// CHECK-NEXT: nn.accumulate_grad %[[SUM]], %[[G1]] {inplace}
// The peak is that first sum: x and the target (2 x 64 B) and w (256 B)
// persist; the two weight gradients and their sum (3 x 256 B), the input
// gradient of the middle linear (64 B) and the loss (4 B) are live:
// 384 + 768 + 64 + 4 = 1,220.
// MEM-LABEL: memory of @step
// MEM: peak 1220 at [9] nn.accumulate_grad
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b = nn.linear %a, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %c = nn.linear %b, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  return %c : tensor<2x8xf32>
}

// -----

// A 3-D activation read by two projections (q_proj and k_proj of one
// hidden state): its first gradient is a view, so the sum is a new tensor.
// CHECK-LABEL: func.func @step
// CHECK: %[[GK:.*]]:2 = nn.backward "nn.linear"
// CHECK-NEXT: %[[GQ:.*]]:2 = nn.backward "nn.linear"
// CHECK-NEXT: nn.accumulate_grad %[[GK]]#0, %[[GQ]]#0 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w0 = nn.param "w0" : tensor<8x8xf32>
  %w1 = nn.param "q.weight" : tensor<8x8xf32>
  %w2 = nn.param "k.weight" : tensor<8x8xf32>
  %h = nn.linear %x, %w0 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %q = nn.linear %h, %w1 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %k = nn.linear %h, %w2 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %s = nn.add %q, %k : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %s : tensor<2x4x8xf32>
}

// -----

// The same with a 2-D activation: addmm's input gradient is a tensor of
// its own, which the second gradient is added into.
// CHECK-LABEL: func.func @step
// CHECK: %[[GK:.*]]:2 = nn.backward "nn.linear"
// CHECK-NEXT: %[[GQ:.*]]:2 = nn.backward "nn.linear"
// CHECK-NEXT: nn.accumulate_grad %[[GK]]#0, %[[GQ]]#0 {inplace} : tensor<8x8xf32>, tensor<8x8xf32>
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %w0 = nn.param "w0" : tensor<8x8xf32>
  %w1 = nn.param "q.weight" : tensor<8x8xf32>
  %w2 = nn.param "k.weight" : tensor<8x8xf32>
  %h = nn.linear %x, %w0 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %q = nn.linear %h, %w1 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %k = nn.linear %h, %w2 : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  %s = nn.add %q, %k : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  return %s : tensor<8x8xf32>
}

// -----

// nn.split (unsafe_chunk of a GRU's gates): one backward node for all the
// pieces, once their gradients are in; it concatenates them into one new
// [2, 12] gradient, with zeros for the piece nobody read (a [2, 4] float32
// workspace, 32 B), and grad_results says which pieces the gradients are of.
// CHECK-LABEL: func.func @step
// CHECK: %[[P:.*]]:3 = nn.split
// CHECK: %[[GM:.*]]:2 = nn.backward "nn.mul"
// CHECK-NEXT: %[[GH:.*]] = nn.backward "nn.split" saved() grads(%[[GM]]#0, %[[GM]]#1) {{.*}}grad_results = array<i1: true, false, true>{{.*}}workspace = array<i64: 32>} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: nn.backward "nn.linear" saved(%arg0) grads(%[[GH]])
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w = nn.param "w" : tensor<12x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<12x8xf32>) -> tensor<2x12xf32>
  %p:3 = nn.split %h {dim = 1 : i64, sizes = array<i64: 4, 4, 4>} : (tensor<2x12xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>)
  %s = nn.mul %p#0, %p#2 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %s : tensor<2x4xf32>
}

// -----

// CatBackward narrows the gradient: a contiguous block (stacked rows, as
// at::stack of an RNN's steps) is a view of it, no node and no copy, and
// the whole gradient stays alive while a row is (the first sum of a's
// gradient is out of place: the row is a view).
// CHECK-LABEL: func.func @step
// CHECK-NOT: nn.backward "nn.concat"
// CHECK: %[[G:.*]] = nn.backward "nn.mse_loss"
// CHECK-NEXT: %[[R0:.*]] = nn.slice %[[G]] {dim = 0 : i64, end = 1 : i64, start = 0 : i64} : (tensor<2x2x8xf32>) -> tensor<1x2x8xf32>
// CHECK-NEXT: %[[R1:.*]] = nn.slice %[[G]] {dim = 0 : i64, end = 2 : i64, start = 1 : i64} : (tensor<2x2x8xf32>) -> tensor<1x2x8xf32>
// CHECK-NEXT: %[[GT:.*]] = nn.backward "nn.tanh" saved(%{{.*}}) grads(%[[R1]])
// CHECK-NEXT: nn.accumulate_grad %[[R0]], %[[GT]] : tensor<1x2x8xf32>, tensor<2x8xf32>
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b = nn.tanh %a : tensor<2x8xf32>
  %ra = nn.reshape %a : tensor<2x8xf32> -> tensor<1x2x8xf32>
  %rb = nn.reshape %b : tensor<2x8xf32> -> tensor<1x2x8xf32>
  %s = nn.concat %ra, %rb {dim = 0 : i64} : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<2x2x8xf32>
  return %s : tensor<2x2x8xf32>
}

// -----

// The stacked rows' gradient reaches the concatenation through views that
// keep it contiguous (an ONNX RNN's output Y: reshaped to [T, B, D, H],
// its size-1 direction dimension moved, [T, D, B, H]): CatBackward's rows
// are still views of it, as in PyTorch (a size-1 dimension's stride does
// not make a tensor strided).
// CHECK-LABEL: func.func @step
// CHECK-NOT: nn.backward "nn.concat"
// CHECK: %[[G:.*]] = nn.backward "nn.mse_loss"
// CHECK-NEXT: %[[V0:.*]] = nn.reshape %[[G]] : tensor<2x1x2x8xf32> -> tensor<2x2x8xf32>
// CHECK-NEXT: nn.slice %[[V0]] {dim = 0 : i64, end = 1 : i64, start = 0 : i64} : (tensor<2x2x8xf32>) -> tensor<1x2x8xf32>
// CHECK-NEXT: %[[V1:.*]] = nn.reshape %[[G]] : tensor<2x1x2x8xf32> -> tensor<2x2x8xf32>
// CHECK-NEXT: nn.slice %[[V1]] {dim = 0 : i64, end = 2 : i64, start = 1 : i64} : (tensor<2x2x8xf32>) -> tensor<1x2x8xf32>
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x1x2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b = nn.tanh %a : tensor<2x8xf32>
  %ra = nn.reshape %a : tensor<2x8xf32> -> tensor<1x2x8xf32>
  %rb = nn.reshape %b : tensor<2x8xf32> -> tensor<1x2x8xf32>
  %s = nn.concat %ra, %rb {dim = 0 : i64} : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<2x2x8xf32>
  %y = nn.reshape %s : tensor<2x2x8xf32> -> tensor<2x2x1x8xf32>
  %t = nn.transpose %y {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x2x1x8xf32>) -> tensor<2x1x2x8xf32>
  return %t : tensor<2x1x2x8xf32>
}

// -----

// The same through a transpose that moves a dimension larger than 1: the
// rows are strided, each a copy.
// CHECK-LABEL: func.func @step
// CHECK: nn.backward "nn.concat"
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x2x8xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b = nn.tanh %a : tensor<2x8xf32>
  %ra = nn.reshape %a : tensor<2x8xf32> -> tensor<1x2x8xf32>
  %rb = nn.reshape %b : tensor<2x8xf32> -> tensor<1x2x8xf32>
  %s = nn.concat %ra, %rb {dim = 0 : i64} : (tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<2x2x8xf32>
  %t = nn.transpose %s {dim0 = 0 : i64, dim1 = 1 : i64} : (tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
  return %t : tensor<2x2x8xf32>
}

// -----

// A strided block (columns) stays a copy per input: it stands for the
// contiguous copy most backward kernels make of a strided gradient.
// CHECK-LABEL: func.func @step
// CHECK: nn.backward "nn.concat"
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x16xf32> {
  %w = nn.param "w" : tensor<8x8xf32>
  %a = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %b = nn.tanh %a : tensor<2x8xf32>
  %s = nn.concat %a, %b {dim = 1 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x16xf32>
  return %s : tensor<2x16xf32>
}

// -----

// torch.matmul folds its 3-D operand for mm (a view; the sum is a new
// tensor) but hands the 2-D one a tensor of its own (added into in place).
// CHECK-LABEL: func.func @step
// CHECK: %[[GB:.*]]:2 = nn.backward "nn.matmul"
// CHECK-NEXT: %[[GA:.*]]:2 = nn.backward "nn.matmul"
// CHECK-NEXT: nn.accumulate_grad %[[GB]]#0, %[[GA]]#0 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
// CHECK-NEXT: nn.accumulate_grad %[[GB]]#1, %[[GA]]#1 {inplace} : tensor<8x8xf32>, tensor<8x8xf32>
// MEM-LABEL: memory of @step
func.func @forward(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w0 = nn.param "w0" : tensor<8x8xf32>
  %w1 = nn.param "w1" : tensor<8x8xf32>
  %h = nn.linear %x, %w0 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %a = nn.matmul %h, %w1 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %b = nn.matmul %h, %w1 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  %s = nn.add %a, %b : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %s : tensor<2x4x8xf32>
}
