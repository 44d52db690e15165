// A LibTorch decoder stage: a strided ConvTranspose2d (with output_padding
// and groups) upsampling a feature map, a Conv2d and ReLU after it.
#include "crosscheck.h"

struct UpBlockImpl : torch::nn::Module {
  UpBlockImpl(int64_t in, int64_t out) {
    namespace nn = torch::nn;
    up = register_module(
        "up", nn::ConvTranspose2d(nn::ConvTranspose2dOptions(in, out, 3)
                                      .stride(2)
                                      .padding(1)
                                      .output_padding(1)
                                      .groups(2)));
    conv = register_module(
        "conv", nn::Conv2d(nn::Conv2dOptions(out, out, 3).padding(1)));
  }

  torch::Tensor forward(torch::Tensor x) {
    return torch::relu(conv(up(x)));
  }

  torch::nn::ConvTranspose2d up{nullptr};
  torch::nn::Conv2d conv{nullptr};
};
TORCH_MODULE(UpBlock);

int main(int argc, char **argv) {
  UpBlock net(16, 8);
  printCrossCheck(net, torch::randn({2, 16, 8, 8}), argc, argv);
}
