// Prints what LibTorch itself reports for a module and an input: the
// parameter count (named_parameters()) as a JSON file shaped like vram-opt's
// report ({"parameters": {"count": N}}, for check-json.py), and the shape of
// forward()'s result as a FileCheck directive for @forward's result type.
#include <torch/torch.h>

#include <fstream>
#include <iostream>

template <typename ModuleHolder>
void printCrossCheckTo(ModuleHolder &net, const torch::Tensor &input,
                       const char *jsonPath) {
  int64_t count = 0;
  for (const auto &p : net->named_parameters())
    count += p.value().numel();
  torch::Tensor y = net->forward(input);
  if (jsonPath)
    std::ofstream(jsonPath) << "{\"parameters\": {\"count\": " << count
                            << "}}\n";
  std::cout << "SHAPE: -> tensor<";
  for (int64_t d : y.sizes())
    std::cout << d << "x";
  std::cout << "f32>\n";
}

/// The same, with the JSON file named by argv[1] when given.
template <typename ModuleHolder>
void printCrossCheck(ModuleHolder &net, const torch::Tensor &input, int argc,
                     char **argv) {
  printCrossCheckTo(net, input, argc > 1 ? argv[1] : nullptr);
}
