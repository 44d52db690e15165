// Modules whose constructor would keep the C++ front end busy for hours: the
// interpreter's budget of statements per translation unit stops each with
// one located error. budget.test picks one with --module.
//
// The interpreter runs the constructor before it looks at any layer, so a
// stand-in for LibTorch's module base is enough: without <torch/torch.h>
// (ten seconds of parsing) the test runs in well under a second.
namespace torch::nn {
struct Module {};
} // namespace torch::nn

// Three nested loops of 10000 iterations each: every loop stays under the
// per-loop cap, together they run 10^12 iterations.
struct NestedLoops : torch::nn::Module {
  NestedLoops() {
    long width = 10;
    for (long i = 0; i < 10000; ++i)
      for (long j = 0; j < 10000; ++j)
        for (long k = 0; k < 10000; ++k)
          width += 1;
    features = width;
  }
  long features = 0;
};

// Two calls per level, 60 levels deep: under the call depth cap, 2^60
// calls in all.
long leaves(long depth) {
  if (depth == 0)
    return 1;
  return leaves(depth - 1) + leaves(depth - 1);
}

struct Exponential : torch::nn::Module {
  Exponential() { features = leaves(60); }
  long features = 0;
};
