// A LibTorch sequence classifier, the C++ twin of
// benchmarks/accuracy/small_models.py's LstmNet: a 2-layer batch-first LSTM
// with dropout between the layers, the last step's hidden state, a Linear.
#include "crosscheck.h"

struct LstmNetImpl : torch::nn::Module {
  LstmNetImpl() {
    namespace nn = torch::nn;
    rnn = register_module(
        "rnn",
        nn::LSTM(
            nn::LSTMOptions(16, 32).num_layers(2).batch_first(true).dropout(
                0.25)));
    fc = register_module("fc", nn::Linear(32, 10));
  }

  torch::Tensor forward(torch::Tensor x) {
    auto out = rnn(x);
    torch::Tensor y = std::get<0>(out);
    return fc(y.select(1, -1));
  }

  torch::nn::LSTM rnn{nullptr};
  torch::nn::Linear fc{nullptr};
};
TORCH_MODULE(LstmNet);

int main(int argc, char **argv) {
  LstmNet net;
  printCrossCheck(net, torch::randn({2, 12, 16}), argc, argv);
}
