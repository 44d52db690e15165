//===- vram-onnx-fuzz.cpp - libFuzzer target for the ONNX importer --------===//
//
// Feeds arbitrary bytes to importOnnxModel. The importer must either return a
// module or emit diagnostics and return null: never crash, hang, or trip a
// sanitizer. Diagnostics are swallowed.
//
//   vram-onnx-fuzz -max_total_time=60 CORPUS_DIR [SEED_DIRS...]
//
// Symbolic batch and sequence dims are bound to small values (--batch=2
// --seq=8), so that exported models with dynamic axes import.
//
// The work per input is bounded so that the target runs over a thousand
// inputs a second: inputs over kMaxInputBytes are skipped (the seeds are
// small graphs, test/Inputs/fuzz/onnx), and folded constants may hold
// kMaxFoldedElements together (the importer's default is 2^26: folding and
// materializing that many under ASan takes minutes).
//
// Byte-level mutations rarely keep a protobuf parseable, so a custom mutator
// also edits the parsed ModelProto: it drops or repeats node inputs and
// outputs, renames ops, sets attributes, dims and element types to edge
// values, rewires inputs to other tensors and drops initializer data.
//
//===----------------------------------------------------------------------===//

#include "../FuzzContext.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Import/ONNX.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include "onnx/onnx_pb.h"

#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace mlir;

namespace {

constexpr size_t kMaxInputBytes = 8192;
constexpr int64_t kMaxFoldedElements = int64_t(1) << 16;

/// Op types to mutate into: everything the importer's converter table
/// maps, the ops it only folds on constants, plus ops it must reject
/// cleanly.
const std::vector<std::string> &opTypes() {
  static const std::vector<std::string> types = [] {
    std::vector<std::string> t(vram::onnx_import::supportedOps().begin(),
                               vram::onnx_import::supportedOps().end());
    t.insert(t.end(), vram::onnx_import::foldOnlyOps().begin(),
             vram::onnx_import::foldOnlyOps().end());
    for (const char *unsupported : {"Tile", "Loop", "If"})
      t.push_back(unsupported);
    return t;
  }();
  return types;
}
const char *const kAttrNames[] = {"axis",
                                  "axes",
                                  "perm",
                                  "strides",
                                  "pads",
                                  "dilations",
                                  "kernel_shape",
                                  "group",
                                  "transA",
                                  "transB",
                                  "alpha",
                                  "beta",
                                  "epsilon",
                                  "momentum",
                                  "start",
                                  "end",
                                  "split",
                                  "num_outputs",
                                  "to",
                                  "upper",
                                  "allowzero",
                                  "ceil_mode",
                                  "count_include_pad",
                                  "auto_pad",
                                  "keepdims",
                                  "value",
                                  "value_float",
                                  "value_int",
                                  "value_ints",
                                  "min",
                                  "max",
                                  "ratio",
                                  "approximate",
                                  "starts",
                                  "ends",
                                  "shape"};
const int64_t kEdgeInts[] = {0,
                             1,
                             2,
                             3,
                             -1,
                             -2,
                             7,
                             64,
                             1000,
                             1 << 20,
                             int64_t(1) << 31,
                             int64_t(1) << 40,
                             INT64_MAX,
                             INT64_MIN,
                             INT64_MAX / 2,
                             -(int64_t(1) << 33)};
const char *const kEdgeStrings[] = {
    "", "SAME_UPPER", "SAME_LOWER", "VALID", "NOTSET", "tanh", "none", "x"};

struct Mutator {
  std::mt19937_64 rng;
  explicit Mutator(unsigned seed) : rng(seed) {}
  size_t below(size_t n) { return n ? rng() % n : 0; }
  bool coin() { return rng() & 1; }
  template <typename T, size_t N> T pick(T (&a)[N]) { return a[below(N)]; }
  int64_t edgeInt() { return coin() ? pick(kEdgeInts) : int64_t(below(9)) - 4; }

  /// A tensor name of the graph: an input, initializer or node output.
  std::string someName(const onnx::GraphProto &g) {
    for (int tries = 0; tries < 4; ++tries) {
      switch (below(3)) {
      case 0:
        if (g.input_size())
          return g.input(below(g.input_size())).name();
        break;
      case 1:
        if (g.initializer_size())
          return g.initializer(below(g.initializer_size())).name();
        break;
      default:
        if (g.node_size()) {
          const auto &n = g.node(below(g.node_size()));
          if (n.output_size())
            return n.output(below(n.output_size()));
        }
      }
    }
    return "";
  }

  void mutateAttr(onnx::AttributeProto &a) {
    switch (below(6)) {
    case 0:
      a.set_type(onnx::AttributeProto::INT);
      a.set_i(edgeInt());
      break;
    case 1: {
      a.set_type(onnx::AttributeProto::INTS);
      a.clear_ints();
      size_t n = below(6);
      for (size_t k = 0; k < n; ++k)
        a.add_ints(edgeInt());
      break;
    }
    case 2:
      a.set_type(onnx::AttributeProto::FLOAT);
      a.set_f(coin() ? (float)edgeInt() : (float)(rng() % 1000) / 100.0f);
      break;
    case 3:
      a.set_type(onnx::AttributeProto::STRING);
      a.set_s(pick(kEdgeStrings));
      break;
    case 4:
      if (a.ints_size())
        a.set_ints(below(a.ints_size()), edgeInt());
      else
        a.set_i(edgeInt());
      break;
    default:
      a.set_name(pick(kAttrNames));
    }
  }

  void mutateTensor(onnx::TensorProto &t) {
    switch (below(6)) {
    case 0:
      if (t.dims_size())
        t.set_dims(below(t.dims_size()), edgeInt());
      break;
    case 1:
      t.add_dims(coin() ? 1 : edgeInt());
      break;
    case 2:
      t.clear_dims();
      break;
    case 3:
      t.set_data_type((int)below(17));
      break;
    case 4:
      t.clear_raw_data();
      t.clear_external_data();
      t.set_data_location(onnx::TensorProto::DEFAULT);
      break;
    default:
      if (t.raw_data().size()) {
        std::string raw = t.raw_data();
        raw.resize(below(raw.size() + 9));
        t.set_raw_data(raw);
      }
    }
  }

  void mutateValueInfo(onnx::ValueInfoProto &vi) {
    auto *tt = vi.mutable_type()->mutable_tensor_type();
    auto *shape = tt->mutable_shape();
    switch (below(4)) {
    case 0:
      if (shape->dim_size())
        shape->mutable_dim(below(shape->dim_size()))->set_dim_value(edgeInt());
      break;
    case 1:
      shape->add_dim()->set_dim_value(coin() ? 1 : edgeInt());
      break;
    case 2:
      if (shape->dim_size())
        shape->mutable_dim()->RemoveLast();
      break;
    default:
      tt->set_elem_type((int)below(17));
    }
  }

  void mutateNode(onnx::GraphProto &g, onnx::NodeProto &n) {
    switch (below(9)) {
    case 0:
      n.set_op_type(opTypes()[below(opTypes().size())]);
      break;
    case 1:
      if (n.input_size())
        n.mutable_input()->RemoveLast();
      break;
    case 2:
      if (n.output_size())
        n.mutable_output()->RemoveLast();
      break;
    case 3:
      n.add_input(coin() ? "" : someName(g));
      break;
    case 4:
      if (n.input_size())
        n.set_input(below(n.input_size()), someName(g));
      break;
    case 5:
      n.add_output(n.name() + "_extra" + std::to_string(below(3)));
      break;
    case 6:
      if (n.attribute_size()) {
        mutateAttr(*n.mutable_attribute(below(n.attribute_size())));
        break;
      }
      [[fallthrough]];
    case 7: {
      auto *a = n.add_attribute();
      a->set_name(pick(kAttrNames));
      mutateAttr(*a);
      break;
    }
    default:
      for (auto &a : *n.mutable_attribute())
        if (a.has_t())
          mutateTensor(*a.mutable_t());
    }
  }

  void mutate(onnx::ModelProto &m) {
    onnx::GraphProto &g = *m.mutable_graph();
    size_t steps = 1 + below(3);
    for (size_t s = 0; s < steps; ++s) {
      switch (below(8)) {
      case 0:
      case 1:
      case 2:
        if (g.node_size())
          mutateNode(g, *g.mutable_node(below(g.node_size())));
        break;
      case 3:
        if (g.initializer_size())
          mutateTensor(*g.mutable_initializer(below(g.initializer_size())));
        break;
      case 4:
        if (g.input_size())
          mutateValueInfo(*g.mutable_input(below(g.input_size())));
        break;
      case 5:
        if (g.node_size() > 1) // move a node: the importer sorts them
          g.mutable_node()->SwapElements(below(g.node_size()),
                                         below(g.node_size()));
        break;
      case 6:
        if (g.output_size())
          g.mutable_output(below(g.output_size()))->set_name(someName(g));
        break;
      default:
        if (m.opset_import_size())
          m.mutable_opset_import(0)->set_version(below(22));
      }
    }
  }
};

} // namespace

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t maxSize, unsigned seed) {
  Mutator mut(seed);
  onnx::ModelProto model;
  // One time in four, or when the bytes are no model, mutate the bytes.
  if (mut.below(4) == 0 || !model.ParseFromArray(data, (int)size) ||
      !model.has_graph())
    return LLVMFuzzerMutate(data, size, maxSize);
  mut.mutate(model);
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, bytes.data(), bytes.size());
  return bytes.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  // The context uniques every attribute and type it sees and never frees
  // them: start a fresh one now and then so that long runs stay bounded.
  static std::unique_ptr<MLIRContext> ctx;
  static unsigned runs = 0;
  if (!ctx || ++runs % 4096 == 0)
    ctx = vram::makeFuzzContext();

  vram::onnx_import::OnnxImportOptions options;
  options.batch = 2;
  options.seq = 8;
  options.maxFoldedElements = kMaxFoldedElements;
  auto module = vram::onnx_import::importOnnxModel(
      ctx.get(), llvm::StringRef(reinterpret_cast<const char *>(data), size),
      "fuzz.onnx", options);
  return 0;
}
