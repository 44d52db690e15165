// Reductions in LibTorch, the C++ twin of benchmarks/accuracy/
// small_models.py's ReduceNet: a projection's tanh, its sum over time, its
// top 4 features per step and its maximum over time (values and indices),
// concatenated into a Linear, plus the sum of everything.
#include "crosscheck.h"

struct ReduceNetImpl : torch::nn::Module {
  ReduceNetImpl() {
    proj = register_module("proj", torch::nn::Linear(16, 64));
    out = register_module("out", torch::nn::Linear(64 + 64 + 8 * 4, 10));
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor h = torch::tanh(proj(x));
    torch::Tensor total = h.sum({1});
    torch::Tensor top = std::get<0>(h.topk(4, -1));
    torch::Tensor peak = std::get<0>(h.max(1));
    torch::Tensor y = out(torch::cat({total, peak, top.flatten(1)}, -1));
    return y + h.sum();
  }

  torch::nn::Linear proj{nullptr}, out{nullptr};
};
TORCH_MODULE(ReduceNet);

int main(int argc, char **argv) {
  ReduceNet net;
  printCrossCheck(net, torch::randn({2, 8, 16}), argc, argv);
}
