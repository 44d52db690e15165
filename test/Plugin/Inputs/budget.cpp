// LibTorch modules with memory budgets, checked by the vram Clang plugin
// during the compile (budget.test runs it with -Xclang -verify).
#include <torch/torch.h>

// Over budget: a training step with Adam needs more than 1 MB. By hand: the
// parameters are 784*256 + 256 + 256*10 + 10 = 203530 floats = 814120 B; at
// the peak (Adam's foreach update) live the parameters, their gradients, the
// two moments and the update's workspace, 5 * 814120 B, plus the input
// 32*784*4 = 100352 B: 4170952 B = 3.98 MiB, 3170952 B = 3.02 MiB over
// 10^6 B = 976.56 KiB.
// The parameters alone (5 * 814120 B with Adam) exceed the budget: no batch
// fits. AMP keeps the fp32 parameters and their Adam state (and the peak is
// at the optimizer step): the same 3.98 MiB (budget.test checks vram-opt
// --precision=amp-fp16 says so), so the plugin does not suggest it.
// The workspace is one tensor per parameter (torch._foreach_sqrt's list),
// so the largest tensors at the peak are fc1.weight, its gradient, its two
// moments and its workspace tensor, 784 KiB each: the notes name three,
// fc1.weight and both moments.
// AMP saves nothing here (the peak is at Adam's update of fp32 state), so it
// is not suggested.
// The first note names the largest category at the peak: Adam's two moments
// of (784*256 + 256) + (256*10 + 10) = 203,530 parameters, 8 B each =
// 1,628,240 B = 1.55 MiB.
// expected-note@+6 {{1.55 MiB of optimizer_state (39% of the peak), adam: 8 bytes per trainable parameter, 203,530 of them}}
// strict-note@+5 {{1.55 MiB of optimizer_state (39% of the peak), adam: 8 bytes per trainable parameter, 203,530 of them}}
// expected-warning@+4 {{vram: SmallBudgetImpl: peak training memory (exact) 3.98 MiB exceeds the budget of 976.56 KiB by 3.02 MiB}}
// expected-note@+3 {{vram: not even batch size 1 fits the budget}}
// strict-error@+2 {{vram: SmallBudgetImpl: peak training memory (exact) 3.98 MiB exceeds the budget of 976.56 KiB by 3.02 MiB}}
// strict-note@+1 {{vram: not even batch size 1 fits the budget}}
struct [[clang::annotate("vram.budget=1MB;input=32x784;mode=train;optimizer=adam")]] SmallBudgetImpl
    : torch::nn::Module {
  SmallBudgetImpl() {
    // fc1.weight (784*256*4 B = 784 KiB) and its two Adam moments.
    // expected-note@+4 {{784.00 KiB of parameters alive at the peak}}
    // expected-note@+3 2 {{784.00 KiB of optimizer_state alive at the peak}}
    // strict-note@+2 {{784.00 KiB of parameters alive at the peak}}
    // strict-note@+1 2 {{784.00 KiB of optimizer_state alive at the peak}}
    fc1 = register_module("fc1", torch::nn::Linear(784, 256));
    fc2 = register_module("fc2", torch::nn::Linear(256, 10));
  }
  torch::Tensor forward(torch::Tensor x) { return fc2(torch::relu(fc1(x))); }
  torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(SmallBudget);

// Within budget: no diagnostic.
struct [[clang::annotate("vram.budget=1GiB;input=32x784;mode=train;optimizer=sgd")]] LargeBudgetImpl
    : torch::nn::Module {
  LargeBudgetImpl() { fc = register_module("fc", torch::nn::Linear(784, 10)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

// Constructor arguments from the annotation.
struct [[clang::annotate("vram.budget=1GiB;input=4x16;args=32")]] WithArgsImpl
    : torch::nn::Module {
  explicit WithArgsImpl(int64_t width) {
    fc = register_module("fc", torch::nn::Linear(16, width));
  }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

// A budget the plugin cannot read.
// expected-warning@+2 {{vram: ignoring the annotation: cannot read 'budget=lots'}}
// strict-warning@+1 {{vram: ignoring the annotation: cannot read 'budget=lots'}}
struct [[clang::annotate("vram.budget=lots;input=4x16")]] BadAnnotationImpl
    : torch::nn::Module {
  torch::Tensor forward(torch::Tensor x) { return x; }
};

// A module the front end cannot model: the compile goes on with a warning.
struct [[clang::annotate("vram.budget=1GiB;input=4x16")]] UnmodelledImpl
    : torch::nn::Module {
  UnmodelledImpl() {
    // expected-warning@+2 {{vram: cannot model UnmodelledImpl: torch::nn::Conv3d is not modelled by the C++ front end}}
    // strict-warning@+1 {{vram: cannot model UnmodelledImpl: torch::nn::Conv3d is not modelled by the C++ front end}}
    conv = register_module("conv", torch::nn::Conv3d(16, 16, 3));
  }
  torch::Tensor forward(torch::Tensor x) { return conv(x); }
  torch::nn::Conv3d conv{nullptr};
};

// What would fit: the largest batch, found by extracting the module again at
// each candidate (as vram-opt --budget's remark). By hand, inference at batch
// B holds the weight (7840 floats), the bias (10), the input (B*784) and the
// output (B*10): 31400 + 3176 B bytes; at B = 512, 1657512 B = 1.58 MiB,
// 657512 B = 642.10 KiB over 10^6 B. 31400 + 3176 B <= 10^6 for B <= 304
// (B = 305 needs 1000080 B).
// The notes: the input at the class (it has no declaration), the weight at
// its register_module, the output where forward() makes it (the peak).
// expected-note@+9 {{1.53 MiB of inputs (97% of the peak)}}
// strict-note@+8 {{1.53 MiB of inputs (97% of the peak)}}
// expected-warning@+7 {{vram: InferenceBatchImpl: peak inference memory (exact) 1.58 MiB exceeds the budget of 976.56 KiB by 642.10 KiB}}
// expected-note@+6 {{1.53 MiB of inputs alive at the peak}}
// expected-note@+5 {{vram: batch size 304 fits the budget}}
// strict-error@+4 {{vram: InferenceBatchImpl: peak inference memory (exact) 1.58 MiB exceeds the budget of 976.56 KiB by 642.10 KiB}}
// strict-note@+3 {{1.53 MiB of inputs alive at the peak}}
// strict-note@+2 {{vram: batch size 304 fits the budget}}
// The weight: 31360 B = 30.62 KiB, the output 512*10*4 B = 20.00 KiB.
struct [[clang::annotate("vram.budget=1MB;input=512x784;mode=inference")]] InferenceBatchImpl
    : torch::nn::Module {
  InferenceBatchImpl() {
    // expected-note@+2 {{30.62 KiB of parameters alive at the peak}}
    // strict-note@+1 {{30.62 KiB of parameters alive at the peak}}
    fc = register_module("fc", torch::nn::Linear(784, 10));
  }
  // expected-note@+4 {{20.00 KiB of temporaries alive at the peak}}
  // expected-note@+3 {{the peak is here}}
  // strict-note@+2 {{20.00 KiB of temporaries alive at the peak}}
  // strict-note@+1 {{the peak is here}}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

// vram-opt's allocator, metric, torch-version and device options as
// annotation keys, spelled as vram-opt spells them (budget.test checks that
// vram-opt --budget says the same). The same module as above, checked
// against the caching allocator's reserved memory. By hand (PyTorch's CUDA
// caching allocator: sizes rounded up to 512 B, requests up to 1 MiB from
// 2 MiB segments, larger ones below 10 MiB from 20 MiB segments): the weight
// (31360 B), the bias and the output (20480 B) share one 2 MiB segment, the
// input (1605632 B) takes a 20 MiB segment: 22 MiB reserved, 22 MiB - 10^6 B
// = 21.05 MiB over; even batch 1 reserves a 2 MiB segment.
// expected-note@+9 {{1.53 MiB of inputs (97% of the peak)}}
// strict-note@+8 {{1.53 MiB of inputs (97% of the peak)}}
// expected-warning@+7 {{vram: CudaReservedImpl: peak inference memory (reserved) 22.00 MiB exceeds the budget of 976.56 KiB by 21.05 MiB}}
// expected-note@+6 {{1.53 MiB of inputs alive at the peak}}
// expected-note@+5 {{vram: not even batch size 1 fits the budget}}
// strict-error@+4 {{vram: CudaReservedImpl: peak inference memory (reserved) 22.00 MiB exceeds the budget of 976.56 KiB by 21.05 MiB}}
// strict-note@+3 {{1.53 MiB of inputs alive at the peak}}
// strict-note@+2 {{vram: not even batch size 1 fits the budget}}
// The annotation, on one line:
struct [[clang::annotate("vram.budget=1MB;input=512x784;mode=inference;allocator=pytorch-cuda;metric=reserved;torch-version=1.13;device=cuda")]] CudaReservedImpl
    : torch::nn::Module {
  CudaReservedImpl() {
    // expected-note@+2 {{30.62 KiB of parameters alive at the peak}}
    // strict-note@+1 {{30.62 KiB of parameters alive at the peak}}
    fc = register_module("fc", torch::nn::Linear(784, 10));
  }
  // expected-note@+4 {{20.00 KiB of temporaries alive at the peak}}
  // expected-note@+3 {{the peak is here}}
  // strict-note@+2 {{20.00 KiB of temporaries alive at the peak}}
  // strict-note@+1 {{the peak is here}}
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};

// A key the plugin does not know, and a value vram-opt would not accept.
// expected-warning@+2 {{vram: ignoring the annotation: cannot read 'allocator=tcmalloc'}}
// strict-warning@+1 {{vram: ignoring the annotation: cannot read 'allocator=tcmalloc'}}
struct [[clang::annotate("vram.budget=1GiB;input=4x16;allocator=tcmalloc")]] BadAllocatorImpl
    : torch::nn::Module {
  torch::Tensor forward(torch::Tensor x) { return x; }
};

int main() {
  SmallBudget net;
  return net->forward(torch::randn({32, 784})).size(1) == 10 ? 0 : 1;
}
