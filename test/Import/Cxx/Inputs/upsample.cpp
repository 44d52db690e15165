// A LibTorch decoder stage resizing its feature map as UNets do:
// torch::nn::Upsample bilinear with align_corners (by a scale factor) and
// nearest (to a size), each followed by a Conv2d.
#include "crosscheck.h"

struct UpsampleBlockImpl : torch::nn::Module {
  UpsampleBlockImpl(int64_t channels) {
    namespace nn = torch::nn;
    up = register_module(
        "up", nn::Upsample(nn::UpsampleOptions()
                               .scale_factor(std::vector<double>({2, 2}))
                               .mode(torch::kBilinear)
                               .align_corners(true)));
    conv = register_module(
        "conv", nn::Conv2d(nn::Conv2dOptions(channels, channels, 3).padding(1)));
    resize = register_module(
        "resize", nn::Upsample(nn::UpsampleOptions().size(
                      std::vector<int64_t>({24, 20}))));
    head = register_module("head",
                           nn::Conv2d(nn::Conv2dOptions(channels, 2, 1)));
  }

  torch::Tensor forward(torch::Tensor x) {
    return head(resize(torch::relu(conv(up(x)))));
  }

  torch::nn::Upsample up{nullptr}, resize{nullptr};
  torch::nn::Conv2d conv{nullptr}, head{nullptr};
};
TORCH_MODULE(UpsampleBlock);

// Bicubic resizing is not modelled: an error at the module's call.
struct BicubicImpl : torch::nn::Module {
  BicubicImpl() {
    namespace nn = torch::nn;
    up = register_module(
        "up", nn::Upsample(nn::UpsampleOptions()
                               .scale_factor(std::vector<double>({2, 2}))
                               .mode(torch::kBicubic)));
  }
  torch::Tensor forward(torch::Tensor x) { return up(x); }
  torch::nn::Upsample up{nullptr};
};
TORCH_MODULE(Bicubic);

int main(int argc, char **argv) {
  UpsampleBlock net(4);
  printCrossCheck(net, torch::randn({2, 4, 8, 8}), argc, argv);
}
