// Prints what LibTorch itself reports for a module and an input, as
// FileCheck directives for the front end's output: the parameter count
// (named_parameters(), the JSON report's "parameters.count") and the shape
// of forward()'s result (@forward's result type).
#include <torch/torch.h>

#include <iostream>

template <typename ModuleHolder>
void printCrossCheck(ModuleHolder &net, const torch::Tensor &input) {
  int64_t count = 0;
  for (const auto &p : net->named_parameters())
    count += p.value().numel();
  torch::Tensor y = net->forward(input);
  std::cout << "PARAMS: \"count\": " << count << ",\n";
  std::cout << "SHAPE: -> tensor<";
  for (int64_t d : y.sizes())
    std::cout << d << "x";
  std::cout << "f32>\n";
}
