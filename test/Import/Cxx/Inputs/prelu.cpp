// torch::nn::PReLU as LibTorch modules, each after a 3x3 convolution in one
// Sequential: one slope per channel (num_parameters 8, init 0.1), then the
// defaults (one slope, 0.25); then a global average pool and a Linear.
#include "crosscheck.h"

struct PReluNetImpl : torch::nn::Module {
  PReluNetImpl() {
    namespace nn = torch::nn;
    body = register_module(
        "body",
        nn::Sequential(
            nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)),
            nn::PReLU(nn::PReLUOptions().num_parameters(8).init(0.1)),
            nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)), nn::PReLU()));
    fc = register_module("fc", nn::Linear(8, 10));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::adaptive_avg_pool2d(body->forward(x), {1, 1});
    return fc(torch::flatten(x, 1));
  }

  torch::nn::Sequential body{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(PReluNet);

// Four slopes for eight channels (LibTorch throws in forward()).
struct BadPReluImpl : torch::nn::Module {
  BadPReluImpl() {
    namespace nn = torch::nn;
    conv = register_module("conv",
                           nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)));
    act =
        register_module("act", nn::PReLU(nn::PReLUOptions().num_parameters(4)));
  }

  torch::Tensor forward(torch::Tensor x) { return act(conv(x)); }

  torch::nn::Conv2d conv{nullptr};
  torch::nn::PReLU act{nullptr};
};
TORCH_MODULE(BadPRelu);

int main(int argc, char **argv) {
  PReluNet net;
  printCrossCheck(net, torch::randn({2, 3, 16, 16}), argc, argv);
}
