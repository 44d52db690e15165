// Modules the C++ front end cannot extract as they are, and one it extracts
// with warnings. Each vram-opt run of errors.test picks one with --module.
#include <torch/torch.h>

// The Linear expects 100 features; the input has 784 (LibTorch would throw
// at run time).
struct BadLinearImpl : torch::nn::Module {
  BadLinearImpl() { fc = register_module("fc", torch::nn::Linear(100, 10)); }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(BadLinear);

// The width comes from the command line of the program.
struct RuntimeWidthImpl : torch::nn::Module {
  explicit RuntimeWidthImpl(int64_t width) {
    fc = register_module("fc", torch::nn::Linear(784, width));
  }
  torch::Tensor forward(torch::Tensor x) { return fc(x); }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(RuntimeWidth);

// Control flow on the values of a tensor.
struct DataDependentImpl : torch::nn::Module {
  DataDependentImpl() {
    fc = register_module("fc", torch::nn::Linear(784, 10));
  }
  torch::Tensor forward(torch::Tensor x) {
    if (x.sum().item<float>() > 0)
      x = torch::relu(x);
    return fc(x);
  }
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(DataDependent);

// An unmodelled function, and a layer that forward() never calls.
struct WarnedImpl : torch::nn::Module {
  WarnedImpl() {
    fc = register_module("fc", torch::nn::Linear(784, 10));
    unused = register_module("unused", torch::nn::Linear(10, 10));
  }
  torch::Tensor forward(torch::Tensor x) { return torch::abs(fc(x)); }
  torch::nn::Linear fc{nullptr}, unused{nullptr};
};
TORCH_MODULE(Warned);

struct NotAModule {
  int forward(int x) { return x; }
};

int main(int argc, char **argv) {
  RuntimeWidth net(argc);
  return net->forward(torch::randn({2, 784})).size(1) == 0;
}

// A ModuleList element called as a module type it is not: LibTorch's
// as<Conv2d>() returns nullptr.
struct WrongAsImpl : torch::nn::Module {
  WrongAsImpl() {
    layers = register_module(
        "layers", torch::nn::ModuleList(torch::nn::Linear(784, 10)));
  }
  torch::Tensor forward(torch::Tensor x) {
    return layers[0]->as<torch::nn::Conv2d>()->forward(x);
  }
  torch::nn::ModuleList layers{nullptr};
};
TORCH_MODULE(WrongAs);

// LibTorch 1.13's C++ MultiheadAttention adds attn_mask to the scores: a
// bool mask would be added as 0/1, not mask.
struct BoolMaskImpl : torch::nn::Module {
  BoolMaskImpl() {
    attn = register_module("attn", torch::nn::MultiheadAttention(16, 2));
  }
  torch::Tensor forward(torch::Tensor x) {
    auto mask = torch::ones({x.size(0), x.size(0)}, torch::kBool).triu(1);
    return std::get<0>(attn->forward(x, x, x, {}, false, mask));
  }
  torch::nn::MultiheadAttention attn{nullptr};
};
TORCH_MODULE(BoolMask);
