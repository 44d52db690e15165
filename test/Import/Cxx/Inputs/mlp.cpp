// An MLP in the LibTorch C++ frontend: Linear layers built from plain
// arguments and from LinearOptions, a Dropout, a view of the input and
// torch::relu between the layers.
#include "crosscheck.h"

struct MLPImpl : torch::nn::Module {
  MLPImpl(int64_t in, int64_t hidden, int64_t classes) {
    fc1 = register_module("fc1", torch::nn::Linear(in, hidden));
    drop = register_module("drop", torch::nn::Dropout(0.1));
    fc2 = register_module(
        "fc2", torch::nn::Linear(
                   torch::nn::LinearOptions(hidden, hidden / 2).bias(false)));
    fc3 = register_module("fc3", torch::nn::Linear(hidden / 2, classes));
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(fc1->forward(x.view({x.size(0), -1})));
    x = drop(x);
    x = torch::relu(fc2(x));
    return fc3(x);
  }

  torch::nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
  torch::nn::Dropout drop{nullptr};
};
TORCH_MODULE(MLP);

int main(int argc, char **argv) {
  MLP net(784, 256, 10);
  printCrossCheck(net, torch::randn({32, 1, 28, 28}), argc, argv);
}
