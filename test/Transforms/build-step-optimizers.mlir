// The optimizers of issue 23 as vram-build-step builds them: the state each
// keeps per parameter (its type is its size) and the temporaries of one
// update, read off the memory analysis's event stream. Every number below is
// computed by hand from the sources named (torch 2.15 torch/optim/sgd.py and
// _adafactor.py; bitsandbytes 0.50.2 optim/optimizer.py); the whole-model
// figures are compared with measurements in
// test/Analysis/optimizers-torch2-cpu.test.
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adafactor implementation=foreach" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=ADAFACTOR
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adafactor implementation=for_loop" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=ADAFACTOR-LOOP
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adamw8bit" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=ADAMW8BIT
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=adamw8bit" | FileCheck %s --check-prefix=ADAMW8BIT-IR
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=lion" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=LION
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd_nesterov implementation=for_loop" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=NESTEROV-LOOP
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd_nesterov implementation=foreach" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=NESTEROV
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd optimizer-in-backward=true" | FileCheck %s --check-prefix=INBWD
// RUN: vram-opt %s -split-input-file --vram-build-step="mode=train optimizer=sgd optimizer-in-backward=true" --vram-print-memory -o /dev/null | FileCheck %s --check-prefix=INBWD-MEM

// fc: a [128, 64] float32 weight (8,192 elements, 32,768 B) and a [128]
// bias (512 B).
//
// Adafactor factors the weight's second moment over its last two dims:
// row_var [128, 1] (512 B), col_var [1, 64] (256 B); the bias keeps an
// unfactored variance (512 B). foreach: the matrices' var_estimate
// (row_var @ col_var, 32,768 B), then the vectors' variance.clone() (512 B)
// while it is still alive; row_var.mean(dim=-2) ([1, 1], 4 B) dies before
// the vectors run and is the smaller, so the peak holds 32,768 + 512.
// ADAFACTOR-LABEL: memory of @step
// ADAFACTOR: alloc #{{[0-9]+}} 512 optimizer_state "fc.weight.row_var" tensor<128x1xf32>
// ADAFACTOR: alloc #{{[0-9]+}} 256 optimizer_state "fc.weight.col_var" tensor<1x64xf32>
// ADAFACTOR: alloc #{{[0-9]+}} 512 optimizer_state "fc.bias.variance" tensor<128xf32>
// ADAFACTOR: nn.optimizer_step (optimizer):
// ADAFACTOR-NEXT: alloc #{{[0-9]+}} 32768 temporaries workspace of nn.optimizer_step
// ADAFACTOR-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.optimizer_step
// ADAFACTOR-NOT: alloc
// ADAFACTOR: peak
//
// The for-loop form, one parameter at a time: the weight's var_estimate
// (32,768 B) with row_mean [128, 1] (512 B) and col_mean [1, 64] (256 B)
// still bound to their names, and row_var.mean [1, 1] (4 B); the bias's
// grad * grad and variance.clone() (512 B each).
// ADAFACTOR-LOOP-LABEL: memory of @step
// ADAFACTOR-LOOP: nn.optimizer_step (optimizer):
// ADAFACTOR-LOOP-NEXT: alloc #{{[0-9]+}} 32768 temporaries workspace of nn.optimizer_step
// ADAFACTOR-LOOP-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.optimizer_step
// ADAFACTOR-LOOP-NEXT: alloc #{{[0-9]+}} 256 temporaries workspace of nn.optimizer_step
// ADAFACTOR-LOOP-NEXT: alloc #{{[0-9]+}} 4 temporaries workspace of nn.optimizer_step
// ADAFACTOR-LOOP: nn.optimizer_step (optimizer):
// ADAFACTOR-LOOP-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.optimizer_step
// ADAFACTOR-LOOP-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.optimizer_step
//
// bitsandbytes' AdamW8bit: two quantization maps of 256 float32 (1,024 B
// each) once; the weight (8,192 >= 4,096 elements) keeps exp_avg and
// exp_avg_sq in 8 bits (8,192 B each) and a float32 absmax per block of 256
// (8,192 / 256 = 32 blocks, 128 B each); the bias (128 < 4,096) keeps
// float32 state (512 B each). Its kernels update in place: no workspace.
// State: 2,048 + 16,384 + 256 + 1,024 = 19,712 B.
// ADAMW8BIT-LABEL: memory of @step
// ADAMW8BIT: alloc #{{[0-9]+}} 1024 optimizer_state "optimizer.qmap1" tensor<256xf32>
// ADAMW8BIT-NEXT: alloc #{{[0-9]+}} 1024 optimizer_state "optimizer.qmap2" tensor<256xf32>
// ADAMW8BIT-NEXT: alloc #{{[0-9]+}} 8192 optimizer_state "fc.weight.exp_avg" tensor<128x64xui8>
// ADAMW8BIT-NEXT: alloc #{{[0-9]+}} 8192 optimizer_state "fc.weight.exp_avg_sq" tensor<128x64xui8>
// ADAMW8BIT-NEXT: alloc #{{[0-9]+}} 128 optimizer_state "fc.weight.absmax1" tensor<32xf32>
// ADAMW8BIT-NEXT: alloc #{{[0-9]+}} 128 optimizer_state "fc.weight.absmax2" tensor<32xf32>
// ADAMW8BIT: alloc #{{[0-9]+}} 512 optimizer_state "fc.bias.exp_avg" tensor<128xf32>
// ADAMW8BIT-NEXT: alloc #{{[0-9]+}} 512 optimizer_state "fc.bias.exp_avg_sq" tensor<128xf32>
// ADAMW8BIT-NOT: workspace of nn.optimizer_step
// ADAMW8BIT: optimizer_state=19712
//
// The update runs per parameter (bitsandbytes' only implementation).
// ADAMW8BIT-IR-LABEL: func.func @step
// ADAMW8BIT-IR-SAME: nn.optimizer = #nn.optimizer_config<adamw8bit, for_loop, weight_decay = 0.000000e+00>
// ADAMW8BIT-IR: nn.optimizer_step adamw8bit for_loop params(%{{.*}}) grads(%{{.*}}) state(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<128x64xf32>, tensor<128x64xf32>, tensor<128x64xui8>, tensor<128x64xui8>, tensor<32xf32>, tensor<32xf32>) -> ()
// ADAMW8BIT-IR-NEXT: nn.optimizer_step adamw8bit for_loop params(%{{.*}}) grads(%{{.*}}) state(%{{.*}}, %{{.*}}) : (tensor<128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<128xf32>) -> ()
//
// bitsandbytes' Lion: one float32 state (exp_avg) per parameter, no
// workspace: 32,768 + 512 B.
// LION-LABEL: memory of @step
// LION: alloc #{{[0-9]+}} 32768 optimizer_state "fc.weight.exp_avg" tensor<128x64xf32>
// LION: alloc #{{[0-9]+}} 512 optimizer_state "fc.bias.exp_avg" tensor<128xf32>
// LION-NOT: workspace of nn.optimizer_step
// LION: optimizer_state=33280
//
// SGD with Nesterov momentum keeps a momentum buffer; the for-loop form's
// grad.add(buf, alpha=momentum) is a new tensor per parameter, foreach
// adds into the gradients in place.
// NESTEROV-LOOP-LABEL: memory of @step
// NESTEROV-LOOP: alloc #{{[0-9]+}} 32768 optimizer_state "fc.weight.momentum_buffer" tensor<128x64xf32>
// NESTEROV-LOOP: nn.optimizer_step (optimizer):
// NESTEROV-LOOP-NEXT: alloc #{{[0-9]+}} 32768 temporaries workspace of nn.optimizer_step
// NESTEROV-LOOP: nn.optimizer_step (optimizer):
// NESTEROV-LOOP-NEXT: alloc #{{[0-9]+}} 512 temporaries workspace of nn.optimizer_step
// NESTEROV-LABEL: memory of @step
// NESTEROV: alloc #{{[0-9]+}} 32768 optimizer_state "fc.weight.momentum_buffer" tensor<128x64xf32>
// NESTEROV-NOT: workspace of nn.optimizer_step
// NESTEROV: peak
//
// The optimizer in backward: an update per parameter right after the node
// that computes its gradient (in parameter order), before the next node;
// the step says so.
// INBWD-LABEL: func.func @step
// INBWD-SAME: nn.optimizer_in_backward
// INBWD: %[[G:.*]]:2 = nn.backward "nn.linear"
// INBWD-NEXT: nn.optimizer_step sgd foreach params(%{{.*}}) grads(%[[G]]#0) state() : (tensor<128x64xf32>, tensor<128x64xf32>) -> ()
// INBWD-NEXT: nn.optimizer_step sgd foreach params(%{{.*}}) grads(%[[G]]#1) state() : (tensor<128xf32>, tensor<128xf32>) -> ()
// INBWD-NEXT: return
// Each gradient is freed by its update: the weight's 32,768 B after the
// first, the bias's 512 B after the second.
// INBWD-MEM-LABEL: memory of @step
// INBWD-MEM: alloc #[[GW:[0-9]+]] 32768 gradients nn.backward#0 tensor<128x64xf32>
// INBWD-MEM-NEXT: alloc #[[GB:[0-9]+]] 512 gradients nn.backward#1 tensor<128xf32>
// INBWD-MEM: nn.optimizer_step (optimizer):
// INBWD-MEM-NEXT: live
// INBWD-MEM-NEXT: free #[[GW]]
// INBWD-MEM: nn.optimizer_step (optimizer):
// INBWD-MEM-NEXT: live
// INBWD-MEM-NEXT: free #[[GB]]
func.func @forward(%x: tensor<2x64xf32>) -> tensor<2x128xf32> {
  %w = nn.param "fc.weight" : tensor<128x64xf32>
  %b = nn.param "fc.bias" : tensor<128xf32>
  %o = nn.linear %x, %w, %b : (tensor<2x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<2x128xf32>
  return %o : tensor<2x128xf32>
}

// -----

// A bfloat16 model: torch.optim's state follows the parameter (bf16, 2 B an
// element), bitsandbytes' 32-bit state is float32 whatever the parameter
// (get_state_buffer(p, dtype=torch.float32)).
// ADAFACTOR-LABEL: memory of @step
// ADAFACTOR: alloc #{{[0-9]+}} 32 optimizer_state "fc.weight.row_var" tensor<16x1xbf16>
// ADAFACTOR: alloc #{{[0-9]+}} 16 optimizer_state "fc.weight.col_var" tensor<1x8xbf16>
// ADAMW8BIT-LABEL: memory of @step
// ADAMW8BIT-NOT: qmap
// ADAMW8BIT: alloc #{{[0-9]+}} 512 optimizer_state "fc.weight.exp_avg" tensor<16x8xf32>
// ADAMW8BIT-NEXT: alloc #{{[0-9]+}} 512 optimizer_state "fc.weight.exp_avg_sq" tensor<16x8xf32>
// LION-LABEL: memory of @step
// LION: alloc #{{[0-9]+}} 512 optimizer_state "fc.weight.exp_avg" tensor<16x8xf32>
// NESTEROV-LABEL: memory of @step
// NESTEROV: alloc #{{[0-9]+}} 256 optimizer_state "fc.weight.momentum_buffer" tensor<16x8xbf16>
func.func @forward(%x: tensor<2x8xbf16>) -> tensor<2x16xbf16> {
  %w = nn.param "fc.weight" : tensor<16x8xbf16>
  %o = nn.linear %x, %w : (tensor<2x8xbf16>, tensor<16x8xbf16>) -> tensor<2x16xbf16>
  return %o : tensor<2x16xbf16>
}
