// A ResNet-style network: BasicBlocks with residual adds (and a 1x1
// downsample Sequential when the shape changes) in Sequential stages built
// by a helper method with a loop, options from constructor arguments.
#include "crosscheck.h"

struct BasicBlockImpl : torch::nn::Module {
  BasicBlockImpl(int64_t in, int64_t out, int64_t stride)
      : conv1(torch::nn::Conv2dOptions(in, out, 3)
                  .stride(stride)
                  .padding(1)
                  .bias(false)),
        bn1(out),
        conv2(torch::nn::Conv2dOptions(out, out, 3).padding(1).bias(false)),
        bn2(out) {
    register_module("conv1", conv1);
    register_module("bn1", bn1);
    register_module("conv2", conv2);
    register_module("bn2", bn2);
    if (stride != 1 || in != out)
      downsample = register_module(
          "downsample",
          torch::nn::Sequential(
              torch::nn::Conv2d(torch::nn::Conv2dOptions(in, out, 1)
                                    .stride(stride)
                                    .bias(false)),
              torch::nn::BatchNorm2d(out)));
  }

  torch::Tensor forward(torch::Tensor x) {
    torch::Tensor identity = x;
    torch::Tensor out = torch::relu(bn1(conv1(x)));
    out = bn2->forward(conv2->forward(out));
    if (!downsample.is_empty())
      identity = downsample->forward(x);
    out += identity;
    return torch::relu(out);
  }

  torch::nn::Conv2d conv1, conv2;
  torch::nn::BatchNorm2d bn1, bn2;
  torch::nn::Sequential downsample{nullptr};
};
TORCH_MODULE(BasicBlock);

struct ResNetImpl : torch::nn::Module {
  explicit ResNetImpl(int64_t numClasses, int64_t width = 16) {
    conv1 = register_module(
        "conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(3, width, 7)
                                       .stride(2)
                                       .padding(3)
                                       .bias(false)));
    bn1 = register_module("bn1", torch::nn::BatchNorm2d(width));
    pool = register_module(
        "pool", torch::nn::MaxPool2d(
                    torch::nn::MaxPool2dOptions(3).stride(2).padding(1)));
    layer1 = register_module("layer1", makeLayer(width, width, 2, 1));
    layer2 = register_module("layer2", makeLayer(width, 2 * width, 2, 2));
    layer3 = register_module("layer3", makeLayer(2 * width, 4 * width, 2, 2));
    avgpool = register_module("avgpool",
                              torch::nn::AdaptiveAvgPool2d(
                                  torch::nn::AdaptiveAvgPool2dOptions({1, 1})));
    fc = register_module("fc", torch::nn::Linear(4 * width, numClasses));
  }

  torch::nn::Sequential makeLayer(int64_t in, int64_t out, int blocks,
                                  int64_t stride) {
    torch::nn::Sequential stage;
    stage->push_back(BasicBlock(in, out, stride));
    for (int i = 1; i < blocks; ++i)
      stage->push_back(BasicBlock(out, out, 1));
    return stage;
  }

  torch::Tensor forward(torch::Tensor x) {
    x = pool(torch::relu(bn1(conv1(x))));
    x = layer3->forward(layer2->forward(layer1->forward(x)));
    x = torch::flatten(avgpool(x), 1);
    return fc(x);
  }

  torch::nn::Conv2d conv1{nullptr};
  torch::nn::BatchNorm2d bn1{nullptr};
  torch::nn::MaxPool2d pool{nullptr};
  torch::nn::Sequential layer1{nullptr}, layer2{nullptr}, layer3{nullptr};
  torch::nn::AdaptiveAvgPool2d avgpool{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(ResNet);

int main(int argc, char **argv) {
  ResNet net(10);
  printCrossCheck(net, torch::randn({4, 3, 64, 64}), argc, argv);
}
