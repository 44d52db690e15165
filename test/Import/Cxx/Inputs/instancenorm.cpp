// torch::nn::InstanceNorm2d as LibTorch modules, each after a 3x3
// convolution and before a PReLU in one Sequential: with affine parameters,
// then without; then a global average pool and a Linear (export_pt2.py's
// NormActNet in C++).
#include "crosscheck.h"

struct NormActNetImpl : torch::nn::Module {
  NormActNetImpl() {
    namespace nn = torch::nn;
    body = register_module(
        "body",
        nn::Sequential(
            nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)),
            nn::InstanceNorm2d(nn::InstanceNorm2dOptions(8).affine(true)),
            nn::PReLU(nn::PReLUOptions().num_parameters(8)),
            nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)),
            nn::InstanceNorm2d(8), nn::PReLU()));
    fc = register_module("fc", nn::Linear(8, 10));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::adaptive_avg_pool2d(body->forward(x), {1, 1});
    return fc(torch::flatten(x, 1));
  }

  torch::nn::Sequential body{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(NormActNet);

// Running statistics are not modelled.
struct TrackedNormImpl : torch::nn::Module {
  TrackedNormImpl() {
    namespace nn = torch::nn;
    norm = register_module(
        "norm", nn::InstanceNorm2d(
                    nn::InstanceNorm2dOptions(3).track_running_stats(true)));
  }

  torch::Tensor forward(torch::Tensor x) { return norm(x); }

  torch::nn::InstanceNorm2d norm{nullptr};
};
TORCH_MODULE(TrackedNorm);

int main(int argc, char **argv) {
  NormActNet net;
  printCrossCheck(net, torch::randn({2, 3, 16, 16}), argc, argv);
}
