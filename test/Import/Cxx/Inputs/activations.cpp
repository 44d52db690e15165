// Issue 22's activations as LibTorch modules, each after a 3x3 convolution
// in one Sequential: LeakyReLU (slope 0.2, in place), ELU, SELU (in place),
// CELU (alpha 0.5), Mish, Softplus (beta 2); then a global average pool and
// a Linear.
#include "crosscheck.h"

struct ActNetImpl : torch::nn::Module {
  ActNetImpl() {
    namespace nn = torch::nn;
    body = register_module(
        "body",
        nn::Sequential(
            nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)),
            nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2).inplace(
                true)),
            nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)), nn::ELU(),
            nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)),
            nn::SELU(nn::SELUOptions(true)),
            nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)),
            nn::CELU(nn::CELUOptions().alpha(0.5)),
            nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)), nn::Mish(),
            nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)),
            nn::Softplus(nn::SoftplusOptions().beta(2.0))));
    fc = register_module("fc", nn::Linear(8, 10));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::adaptive_avg_pool2d(body->forward(x), {1, 1});
    return fc(torch::flatten(x, 1));
  }

  torch::nn::Sequential body{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ActNet);

int main(int argc, char **argv) {
  ActNet net;
  printCrossCheck(net, torch::randn({2, 3, 16, 16}), argc, argv);
}
