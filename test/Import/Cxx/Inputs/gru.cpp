// A LibTorch sequence classifier with a GRU, the C++ twin of
// benchmarks/accuracy/small_models.py's GruNet: a 2-layer batch-first GRU
// with dropout between the layers, the last step's hidden state, a Linear.
#include "crosscheck.h"

struct GruNetImpl : torch::nn::Module {
  GruNetImpl() {
    namespace nn = torch::nn;
    rnn = register_module(
        "rnn",
        nn::GRU(nn::GRUOptions(16, 32).num_layers(2).batch_first(true).dropout(
            0.25)));
    fc = register_module("fc", nn::Linear(32, 10));
  }

  torch::Tensor forward(torch::Tensor x) {
    auto out = rnn(x);
    torch::Tensor y = std::get<0>(out);
    return fc(y.select(1, -1));
  }

  torch::nn::GRU rnn{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(GruNet);

int main(int argc, char **argv) {
  GruNet net;
  printCrossCheck(net, torch::randn({2, 12, 16}), argc, argv);
}
