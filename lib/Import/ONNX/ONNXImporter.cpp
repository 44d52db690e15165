//===- ONNXImporter.cpp - ONNX ModelProto -> nn dialect -------------------===//
//
// Imports an ONNX graph as `func.func @forward` in the nn dialect:
//  - non-initializer graph inputs become function arguments, symbolic dims
//    bound by --dim/--batch/--seq;
//  - initializers become `nn.param` (float, trainable) or `nn.buffer`
//    (BatchNormalization running statistics, integer tensors, names matching
//    --onnx-buffers patterns), created on first use; externally stored
//    initializers only need their dims;
//  - shape computations over constants (Shape, Gather, Concat, ...) are folded
//    at import time, so Reshape/Expand/Slice get static shapes;
//  - PyTorch export idioms are raised back to layers: nn.Linear (Gemm, or
//    [Transpose +] MatMul + Add of an initializer), GELU (erf and tanh forms),
//    SiLU (x * sigmoid(x)), Clip(0, 6) -> relu6.
//
//===----------------------------------------------------------------------===//

#include "vram/Import/ONNX.h"

#include "ConstTensor.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#include "onnx/onnx_pb.h"

#include <climits>
#include <cmath>
#include <deque>
#include <map>

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;
using llvm::StringRef;

llvm::ArrayRef<llvm::StringLiteral> vram::onnx_import::supportedOps() {
  // The ops the importer maps (besides constant folding of shape ops).
  static const llvm::StringLiteral ops[] = {
      "Add",
      "AveragePool",
      "BatchNormalization",
      "Cast",
      "Clip",
      "Concat",
      "Constant",
      "ConstantOfShape",
      "Conv",
      "Div",
      "Dropout",
      "Equal",
      "Erf",
      "Exp",
      "Expand",
      "Flatten",
      "Gather",
      "Gelu",
      "Gemm",
      "GlobalAveragePool",
      "HardSigmoid",
      "HardSwish",
      "Identity",
      "LayerNormalization",
      "LogSoftmax",
      "MatMul",
      "MaxPool",
      "Mul",
      "Neg",
      "Not",
      "Pad",
      "Pow",
      "Range",
      "Reciprocal",
      "ReduceMean",
      "Relu",
      "Reshape",
      "Shape",
      "Sigmoid",
      "Slice",
      "Softmax",
      "Split",
      "Sqrt",
      "Squeeze",
      "Sub",
      "Tanh",
      "Transpose",
      "Trilu",
      "Unsqueeze",
      "Where",
  };
  return ops;
}

namespace {

std::string supportedOpsList() {
  std::string s;
  for (llvm::StringRef op : supportedOps()) {
    if (!s.empty())
      s += ", ";
    s += op.str();
  }
  return s;
}

/// What an ONNX tensor name stands for during the import.
struct Entry {
  enum Kind { Tensor, Const, Init, InitT } kind = Tensor;
  Value value;                      // Tensor
  std::shared_ptr<ConstTensor> cst; // Const
  const onnx::TensorProto *init =
      nullptr; // Init / InitT (InitT: transposed 2-D)
};

/// The shortest decimal double that rounds to the same float as `v`, so that
/// float attributes print as 1.0E-5 rather than 9.9999997473787516E-6.
double roundToFloat(double v) {
  float f = (float)v;
  char buf[32];
  for (int prec = 6; prec <= 9; ++prec) {
    snprintf(buf, sizeof(buf), "%.*g", prec, (double)f);
    double d = strtod(buf, nullptr);
    if ((float)d == f)
      return d;
  }
  return (double)f;
}

class NodeAttrs : public FoldAttrs {
public:
  explicit NodeAttrs(const onnx::NodeProto &n) : node(n) {}
  const onnx::AttributeProto *get(StringRef name) const {
    for (const auto &a : node.attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  std::optional<int64_t> getInt(StringRef name) const override {
    if (auto *a = get(name))
      if (a->type() == onnx::AttributeProto::INT || a->has_i())
        return a->i();
    return std::nullopt;
  }
  /// A float attribute as the shortest double that rounds to the same float
  /// (1e-5, not 9.9999997e-06).
  std::optional<double> getFloat(StringRef name) const {
    if (auto *a = get(name))
      if (a->type() == onnx::AttributeProto::FLOAT || a->has_f())
        return roundToFloat(a->f());
    return std::nullopt;
  }
  std::optional<std::string> getString(StringRef name) const {
    if (auto *a = get(name))
      if (a->has_s())
        return a->s();
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> getInts(StringRef name) const override {
    if (auto *a = get(name))
      return std::vector<int64_t>(a->ints().begin(), a->ints().end());
    return std::nullopt;
  }
  std::optional<std::vector<float>> getFloats(StringRef name) const {
    if (auto *a = get(name))
      return std::vector<float>(a->floats().begin(), a->floats().end());
    return std::nullopt;
  }
  const onnx::TensorProto *getTensor(StringRef name) const override {
    if (auto *a = get(name))
      if (a->has_t())
        return &a->t();
    return nullptr;
  }

private:
  const onnx::NodeProto &node;
};

/// A group of nodes raised to one layer (GELU, SiLU, Hardswish, LayerNorm):
/// emitted at its last node.
struct Fusion {
  enum Kind { Gelu, Silu, Hardswish, LayerNorm };
  Fusion(Kind kind = Gelu, std::string input = "", std::string approximate = "")
      : kind(kind), input(std::move(input)),
        approximate(std::move(approximate)) {}
  Kind kind;
  std::string input;
  std::string approximate;
  // LayerNorm: affine parameters (may be empty), normalized trailing dims, eps.
  std::string weight, bias;
  int64_t normalizedRank = 1;
  double eps = 1e-5;
};

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef filename, const OnnxImportOptions &opts)
      : ctx(ctx), filename(filename.str()), opts(opts), b(ctx),
        fileLoc(FileLineColLoc::get(ctx, filename, 0, 0)) {}

  OwningOpRef<ModuleOp> run(StringRef bytes);

private:
  MLIRContext *ctx;
  std::string filename;
  const OnnxImportOptions &opts;
  OpBuilder b; // layer ops, at the end of the body
  Operation *lastInitOp = nullptr;
  Location fileLoc;
  const onnx::GraphProto *graph = nullptr;
  int64_t opset = 17;

  llvm::StringMap<Entry> env;
  llvm::StringMap<const onnx::TensorProto *> inits;
  llvm::StringMap<const onnx::NodeProto *> producer;
  llvm::StringMap<SmallVector<const onnx::NodeProto *, 2>> consumers;
  llvm::StringSet<> graphOutputs;
  llvm::StringSet<> bnStats;
  std::vector<llvm::GlobPattern> bufferGlobs;
  llvm::DenseMap<const onnx::NodeProto *, Fusion> fusions;
  llvm::SmallPtrSet<const onnx::NodeProto *, 16> absorbed;
  /// Materialized initializers: the value and whether its shape is the
  /// transpose of the stored 2-D initializer.
  llvm::StringMap<std::pair<Value, bool>> initValues;
  /// nn.linear ops without bias, by their ONNX output name (bias folding).
  llvm::StringMap<nn::LinearOp> biaslessLinear;
  /// Parameters that torch.onnx deduplicated (eval-mode export of equal
  /// initial values) and restored under their own name (stable addresses).
  std::deque<onnx::TensorProto> restoredInits;

  // --- diagnostics and locations
  Location nodeLoc(const onnx::NodeProto &n) {
    std::string name = n.name();
    if (name.empty())
      name = n.op_type() + (n.output_size() ? "(" + n.output(0) + ")" : "");
    return NameLoc::get(StringAttr::get(ctx, name), fileLoc);
  }
  InFlightDiagnostic nodeError(const onnx::NodeProto &n) {
    auto d = emitError(nodeLoc(n));
    d << "node '" << n.name() << "' (" << n.op_type() << "): ";
    return d;
  }

  // --- setup
  LogicalResult collectInitializers();
  LogicalResult sortNodes(SmallVectorImpl<const onnx::NodeProto *> &order);
  FailureOr<RankedTensorType> inputType(const onnx::ValueInfoProto &vi);
  FailureOr<Type> elementType(int32_t dtype, Location loc, StringRef what);
  bool isBufferInit(StringRef name, const onnx::TensorProto &t);
  void findFusions();
  void matchLayerNorm(const onnx::NodeProto &m1);

  // --- values
  bool has(StringRef name) { return env.count(name); }
  Entry *lookup(StringRef name) {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  }
  FailureOr<Value> tensor(const onnx::NodeProto &n, int idx,
                          Type constElemType = {});
  FailureOr<Value> tensorOf(StringRef name, Location loc,
                            Type constElemType = {});
  FailureOr<Value> initValue(const onnx::TensorProto &t, bool transposed);
  const ConstTensor *constOf(StringRef name);
  const ConstTensor *constInput(const onnx::NodeProto &n, int idx) {
    if (idx >= n.input_size() || n.input(idx).empty())
      return nullptr;
    return constOf(n.input(idx));
  }
  bool hasInput(const onnx::NodeProto &n, int idx) {
    return idx < n.input_size() && !n.input(idx).empty();
  }
  Value materialize(const ConstTensor &c, Type elemType, Location loc);
  void setTensor(const onnx::NodeProto &n, int idx, Value v) {
    Entry e;
    e.kind = Entry::Tensor;
    e.value = v;
    env[n.output(idx)] = e;
  }
  void setConst(StringRef name, ConstTensor c) {
    Entry e;
    e.kind = Entry::Const;
    e.cst = std::make_shared<ConstTensor>(std::move(c));
    env[name] = e;
  }
  bool singleUse(StringRef name) {
    auto it = consumers.find(name);
    return !graphOutputs.count(name) && it != consumers.end() &&
           it->second.size() == 1;
  }
  std::optional<double> scalarValue(StringRef name);

  /// Creates an op whose result type the op infers, checking the inference
  /// first so that bad shapes give a diagnostic instead of a fatal error.
  template <typename OpTy, typename... Args>
  FailureOr<Value> make(Location loc, Args &&...args) {
    Type placeholder = NoneType::get(ctx);
    auto op = OpTy::create(b, loc, TypeRange{placeholder},
                           std::forward<Args>(args)...);
    SmallVector<Type, 1> types;
    std::string reason;
    LogicalResult inferred = failure();
    {
      // Catch the op's own message to prefix it with the node's name.
      ScopedDiagnosticHandler handler(ctx, [&](Diagnostic &d) {
        if (d.getSeverity() != DiagnosticSeverity::Error)
          return failure();
        reason = d.str();
        return success();
      });
      inferred = OpTy::inferReturnTypes(
          ctx, loc, op->getOperands(), op->getRawDictionaryAttrs(),
          op->getPropertiesStorage(), op->getRegions(), types);
    }
    if (failed(inferred) || types.size() != 1) {
      op->erase();
      auto diag = emitError(loc);
      if (auto nl = dyn_cast<NameLoc>(loc))
        diag << "node '" << nl.getName().getValue() << "': ";
      diag << "cannot build " << OpTy::getOperationName() << ": "
           << (reason.empty() ? "its operands are not valid" : reason);
      return failure();
    }
    op->getResult(0).setType(types[0]);
    return op->getResult(0);
  }

  // --- nodes
  LogicalResult emitNode(const onnx::NodeProto &n);
  LogicalResult emitFusion(const onnx::NodeProto &n, const Fusion &f);
  LogicalResult emitConv(const onnx::NodeProto &n);
  LogicalResult emitPool(const onnx::NodeProto &n);
  LogicalResult emitBatchNorm(const onnx::NodeProto &n);
  LogicalResult emitLayerNorm(const onnx::NodeProto &n);
  LogicalResult emitMatMul(const onnx::NodeProto &n);
  LogicalResult emitGemm(const onnx::NodeProto &n);
  LogicalResult emitBinary(const onnx::NodeProto &n);
  LogicalResult emitUnary(const onnx::NodeProto &n);
  LogicalResult emitElementwise(const onnx::NodeProto &n);
  LogicalResult emitGather(const onnx::NodeProto &n);
  LogicalResult emitShapeOp(const onnx::NodeProto &n);
  LogicalResult emitSlice(const onnx::NodeProto &n);
  LogicalResult emitSplit(const onnx::NodeProto &n);
  LogicalResult emitWhere(const onnx::NodeProto &n);
  LogicalResult emitReduceMean(const onnx::NodeProto &n);
  LogicalResult emitPad(const onnx::NodeProto &n);
  FailureOr<Value> reshapeTo(Value v, ArrayRef<int64_t> shape, Location loc);
  Value contiguousFor(Value v, ArrayRef<int64_t> shape, Location loc);
  FailureOr<Value> linearWeight(StringRef name, bool storedInOut);
};

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

FailureOr<Type> Importer::elementType(int32_t dt, Location loc,
                                      StringRef what) {
  switch (dt) {
  case DT_FLOAT:
    return Type(Float32Type::get(ctx));
  case DT_DOUBLE:
    return Type(Float64Type::get(ctx));
  case DT_FLOAT16:
    return Type(Float16Type::get(ctx));
  case DT_BFLOAT16:
    return Type(BFloat16Type::get(ctx));
  case DT_INT64:
  case DT_UINT64:
    return Type(IntegerType::get(ctx, 64));
  case DT_INT32:
  case DT_UINT32:
    return Type(IntegerType::get(ctx, 32));
  case DT_INT16:
  case DT_UINT16:
    return Type(IntegerType::get(ctx, 16));
  case DT_INT8:
  case DT_UINT8:
    return Type(IntegerType::get(ctx, 8));
  case DT_BOOL:
    return Type(IntegerType::get(ctx, 1));
  default:
    emitError(loc) << what << " has unsupported element type " << dtypeName(dt)
                   << " (" << dt << ")";
    return failure();
  }
}

bool Importer::isBufferInit(StringRef name, const onnx::TensorProto &t) {
  if (bnStats.count(name) || !isFloatDType(t.data_type()))
    return true;
  for (const auto &g : bufferGlobs)
    if (g.match(name))
      return true;
  return false;
}

LogicalResult Importer::collectInitializers() {
  for (const auto &t : graph->initializer()) {
    Location loc = NameLoc::get(StringAttr::get(ctx, t.name()), fileLoc);
    if (t.name().empty())
      return emitError(loc) << "an initializer has no name";
    bool external = t.data_location() == onnx::TensorProto::EXTERNAL ||
                    t.external_data_size() > 0;
    if (external && t.dims_size() == 0)
      return emitError(loc) << "initializer '" << t.name()
                            << "' is stored as external data but has no dims";
    SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
    if (!checkedNumElements(dims))
      return emitError(loc) << "initializer '" << t.name()
                            << "' has negative dims or dims whose product "
                               "overflows int64";
    if (failed(
            elementType(t.data_type(), loc, "initializer '" + t.name() + "'")))
      return failure();
    inits[t.name()] = &t;
    Entry e;
    e.kind = Entry::Init;
    e.init = &t;
    env[t.name()] = e;
  }
  return success();
}

FailureOr<RankedTensorType>
Importer::inputType(const onnx::ValueInfoProto &vi) {
  Location loc = NameLoc::get(StringAttr::get(ctx, vi.name()), fileLoc);
  if (!vi.has_type() || !vi.type().has_tensor_type())
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has no tensor type";
  const auto &tt = vi.type().tensor_type();
  if (!tt.has_shape())
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has no shape; the importer needs ranked inputs";
  auto et = elementType(tt.elem_type(), loc, "graph input '" + vi.name() + "'");
  if (failed(et))
    return failure();
  SmallVector<int64_t> shape;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto &d = tt.shape().dim(k);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return emitError(loc) << "graph input '" << vi.name() << "' dimension "
                              << k << " is negative (" << d.dim_value() << ")";
      shape.push_back(d.dim_value());
      continue;
    }
    std::string param = d.has_dim_param() ? d.dim_param() : "";
    if (!param.empty()) {
      auto it = opts.dims.find(param);
      if (it != opts.dims.end()) {
        shape.push_back(it->second);
        continue;
      }
      std::string lower = StringRef(param).lower();
      StringRef l(lower);
      bool batchLike = l == "n" || l == "b" || l == "bs" || l.contains("batch");
      bool seqLike = l == "t" || l == "s" || l == "l" || l.contains("seq") ||
                     l == "len" || l == "length" || l == "tokens" ||
                     l == "num_tokens" || l == "time" || l == "sequence";
      if (batchLike && opts.batch) {
        shape.push_back(*opts.batch);
        continue;
      }
      if (seqLike && opts.seq) {
        shape.push_back(*opts.seq);
        continue;
      }
    }
    auto diag = emitError(loc) << "graph input '" << vi.name() << "' dimension "
                               << k << " is ";
    if (param.empty())
      diag << "unknown; it cannot be bound";
    else
      diag << "symbolic ('" << param << "') and unbound; bind it with --dim "
           << param << "=VALUE (or --batch/--seq for batch and sequence dims)";
    return failure();
  }
  if (!checkedNumElements(shape))
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has dims whose product overflows int64";
  return RankedTensorType::get(shape, *et);
}

LogicalResult
Importer::sortNodes(SmallVectorImpl<const onnx::NodeProto *> &order) {
  llvm::StringSet<> defined;
  for (const auto &t : graph->initializer())
    defined.insert(t.name());
  for (const auto &vi : graph->input())
    defined.insert(vi.name());
  // Producers. Every ONNX op has an output; the fusion matchers and the
  // emitters rely on output(0).
  for (const auto &n : graph->node()) {
    if (n.output_size() == 0)
      return nodeError(n) << "the node has no outputs";
    for (const auto &o : n.output()) {
      if (o.empty())
        continue;
      if (producer.count(o) || defined.count(o))
        return nodeError(n) << "output '" << o
                            << "' is already defined elsewhere in the graph";
      producer[o] = &n;
    }
  }
  // Kahn's algorithm over node-to-node edges.
  llvm::DenseMap<const onnx::NodeProto *, unsigned> pending;
  llvm::DenseMap<const onnx::NodeProto *,
                 SmallVector<const onnx::NodeProto *, 2>>
      succ;
  for (const auto &n : graph->node()) {
    unsigned deps = 0;
    for (const auto &i : n.input()) {
      if (i.empty())
        continue;
      consumers[i].push_back(&n);
      auto it = producer.find(i);
      if (it != producer.end()) {
        ++deps;
        succ[it->second].push_back(&n);
      } else if (!defined.count(i)) {
        return nodeError(n) << "input '" << i
                            << "' is not produced by any node, graph input or "
                               "initializer";
      }
    }
    pending[&n] = deps;
  }
  std::deque<const onnx::NodeProto *> ready;
  for (const auto &n : graph->node())
    if (pending[&n] == 0)
      ready.push_back(&n);
  while (!ready.empty()) {
    const onnx::NodeProto *n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (const onnx::NodeProto *s : succ[n])
      if (--pending[s] == 0)
        ready.push_back(s);
  }
  if ((int)order.size() != graph->node_size()) {
    for (const auto &n : graph->node())
      if (pending[&n] != 0)
        return nodeError(n) << "the graph has a cycle through this node ("
                            << (graph->node_size() - order.size())
                            << " nodes are on or after a cycle)";
  }
  return success();
}

std::optional<double> Importer::scalarValue(StringRef name) {
  if (const ConstTensor *c = constOf(name))
    if (c->numElements() == 1)
      return c->getF(0);
  // Before emission: look at the Constant node or initializer directly.
  auto decodeOne = [](const onnx::TensorProto &t) -> std::optional<double> {
    ConstTensor c;
    std::string err;
    if (!decodeTensor(t, c, err) || c.numElements() != 1)
      return std::nullopt;
    return c.getF(0);
  };
  auto it = producer.find(name);
  if (it != producer.end()) {
    const onnx::NodeProto *p = it->second;
    if (p->op_type() != "Constant")
      return std::nullopt;
    NodeAttrs a(*p);
    if (auto *t = a.getTensor("value"))
      return decodeOne(*t);
    if (auto f = a.getFloat("value_float"))
      return *f;
    if (auto i = a.getInt("value_int"))
      return (double)*i;
    return std::nullopt;
  }
  auto ii = inits.find(name);
  if (ii != inits.end())
    return decodeOne(*ii->second);
  return std::nullopt;
}

/// Layer normalization as torch.onnx exports it before opset 17:
///   m = ReduceMean(x, axes=[-k..-1]); d = x - m;
///   v = ReduceMean(Pow(d, 2), same axes); y = d / Sqrt(v + eps)
///   [* weight] [+ bias]
/// raised back to one nn.layer_norm (which keeps input, mean and rstd rather
/// than the decomposition's intermediates).
void Importer::matchLayerNorm(const onnx::NodeProto &m1) {
  auto only = [&](StringRef name, StringRef opType) -> const onnx::NodeProto * {
    if (!singleUse(name))
      return nullptr;
    const onnx::NodeProto *c = consumers[name][0];
    return c->op_type() == opType && c->output_size() >= 1 ? c : nullptr;
  };
  auto meanAxes =
      [&](const onnx::NodeProto &r) -> std::optional<std::vector<int64_t>> {
    NodeAttrs a(r);
    if (!a.getInt("keepdims").value_or(1))
      return std::nullopt;
    auto axes = a.getInts("axes");
    if (!axes && r.input_size() > 1 && !r.input(1).empty()) {
      auto it = producer.find(r.input(1));
      if (it == producer.end() || it->second->op_type() != "Constant")
        return std::nullopt;
      ConstTensor c;
      std::string err;
      NodeAttrs ca(*it->second);
      if (!ca.getTensor("value") ||
          !decodeTensor(*ca.getTensor("value"), c, err))
        return std::nullopt;
      axes = c.toInts();
    }
    if (!axes || axes->empty())
      return std::nullopt;
    // The trailing dims, as -k..-1.
    std::vector<int64_t> sorted = *axes;
    llvm::sort(sorted);
    int64_t k = sorted.size();
    for (int64_t i = 0; i < k; ++i)
      if (sorted[i] != i - k)
        return std::nullopt;
    return sorted;
  };
  auto near = [](std::optional<double> v, double want) {
    return v && std::fabs(*v - want) <= 1e-6;
  };
  auto vecInit = [&](StringRef name) {
    // Through the Identity of a deduplicated parameter (eval-mode export).
    for (auto p = producer.find(name);
         p != producer.end() && p->second->op_type() == "Identity" &&
         p->second->input_size() == 1;
         p = producer.find(name))
      name = p->second->input(0);
    auto it = inits.find(name);
    return it != inits.end() && it->second->dims_size() == 1 &&
           isFloatDType(it->second->data_type()) &&
           !isBufferInit(name, *it->second);
  };
  if (m1.input_size() < 1 || m1.output_size() < 1)
    return;
  auto axes = meanAxes(m1);
  if (!axes)
    return;
  const std::string &x = m1.input(0);
  const onnx::NodeProto *sub = only(m1.output(0), "Sub");
  if (!sub || sub->input_size() != 2 || sub->input(0) != x ||
      sub->input(1) != m1.output(0))
    return;
  const std::string &d = sub->output(0);
  auto cit = consumers.find(d);
  if (graphOutputs.count(d) || cit == consumers.end() ||
      cit->second.size() != 2)
    return;
  const onnx::NodeProto *pw = nullptr, *div = nullptr;
  for (const onnx::NodeProto *c : cit->second) {
    if (c->op_type() == "Pow" && c->input_size() == 2 && c->input(0) == d)
      pw = c;
    else if (c->op_type() == "Div" && c->input_size() == 2 && c->input(0) == d)
      div = c;
  }
  if (!pw || !div || !near(scalarValue(pw->input(1)), 2.0))
    return;
  const onnx::NodeProto *m2 = only(pw->output(0), "ReduceMean");
  if (!m2 || meanAxes(*m2) != axes)
    return;
  const onnx::NodeProto *add = only(m2->output(0), "Add");
  if (!add || add->input_size() != 2)
    return;
  std::string epsName =
      add->input(0) == m2->output(0) ? add->input(1) : add->input(0);
  std::optional<double> eps = scalarValue(epsName);
  if (!eps || !(*eps >= 0))
    return;
  const onnx::NodeProto *sq = only(add->output(0), "Sqrt");
  if (!sq || only(sq->output(0), "Div") != div ||
      div->input(1) != sq->output(0))
    return;
  SmallVector<const onnx::NodeProto *, 10> group{&m1, sub, pw, m2, add, sq};
  const onnx::NodeProto *last = div;
  Fusion f;
  f.kind = Fusion::LayerNorm;
  f.input = x;
  f.normalizedRank = axes->size();
  f.eps = roundToFloat(*eps);
  if (const onnx::NodeProto *mw = only(last->output(0), "Mul")) {
    if (mw->input_size() == 2) {
      std::string w =
          mw->input(0) == last->output(0) ? mw->input(1) : mw->input(0);
      if (vecInit(w)) {
        f.weight = w;
        group.push_back(last);
        last = mw;
      }
    }
  }
  if (const onnx::NodeProto *ab = only(last->output(0), "Add")) {
    if (ab->input_size() == 2) {
      std::string bn =
          ab->input(0) == last->output(0) ? ab->input(1) : ab->input(0);
      if (vecInit(bn)) {
        f.bias = bn;
        group.push_back(last);
        last = ab;
      }
    }
  }
  fusions[last] = f;
  absorbed.insert(group.begin(), group.end());
}

/// Finds GELU (erf and tanh forms), SiLU, Hardswish and LayerNorm subgraphs
/// that PyTorch decomposes on export, to raise them back to one op.
void Importer::findFusions() {
  auto near = [](std::optional<double> v, double want) {
    return v && std::fabs(*v - want) <= 1e-3 * std::fabs(want);
  };
  auto soleConsumer = [&](StringRef name,
                          StringRef opType) -> const onnx::NodeProto * {
    if (!singleUse(name))
      return nullptr;
    const onnx::NodeProto *c = consumers[name][0];
    return c->op_type() == opType && c->input_size() == 2 ? c : nullptr;
  };
  auto other = [](const onnx::NodeProto *n, StringRef name) -> std::string {
    return n->input(0) == name ? n->input(1) : n->input(0);
  };
  auto prod = [&](StringRef name, StringRef opType) -> const onnx::NodeProto * {
    auto it = producer.find(name);
    if (it == producer.end() || it->second->op_type() != opType ||
        it->second->output_size() < 1)
      return nullptr;
    return it->second;
  };
  // The common tail: a = 1 + t; out = 0.5 * x * a, in any association.
  auto matchTail = [&](const onnx::NodeProto *t, const std::string &x,
                       SmallVectorImpl<const onnx::NodeProto *> &group)
      -> const onnx::NodeProto * {
    const onnx::NodeProto *a = soleConsumer(t->output(0), "Add");
    if (!a || !near(scalarValue(other(a, t->output(0))), 1.0))
      return nullptr;
    group.push_back(a);
    const onnx::NodeProto *m1 = soleConsumer(a->output(0), "Mul");
    if (!m1)
      return nullptr;
    std::string o = other(m1, a->output(0));
    if (o == x) {
      const onnx::NodeProto *m2 = soleConsumer(m1->output(0), "Mul");
      if (m2 && near(scalarValue(other(m2, m1->output(0))), 0.5)) {
        group.push_back(m1);
        return m2;
      }
      return nullptr;
    }
    if (near(scalarValue(o), 0.5)) {
      const onnx::NodeProto *m2 = soleConsumer(m1->output(0), "Mul");
      if (m2 && other(m2, m1->output(0)) == x) {
        group.push_back(m1);
        return m2;
      }
      return nullptr;
    }
    if (const onnx::NodeProto *h = prod(o, "Mul")) {
      if (singleUse(o) && h->input_size() == 2 &&
          ((h->input(0) == x && near(scalarValue(h->input(1)), 0.5)) ||
           (h->input(1) == x && near(scalarValue(h->input(0)), 0.5)))) {
        group.push_back(h);
        return m1;
      }
    }
    return nullptr;
  };
  for (const auto &n : graph->node()) {
    if (n.input_size() < 1 || n.output_size() < 1)
      continue;
    SmallVector<const onnx::NodeProto *, 8> group;
    std::string x;
    if (n.op_type() == "Erf") {
      // erf(x / sqrt(2)) or erf(x * (1 / sqrt(2)))
      const onnx::NodeProto *d = prod(n.input(0), "Div");
      const onnx::NodeProto *m = prod(n.input(0), "Mul");
      if (d && d->input_size() == 2 && near(scalarValue(d->input(1)), M_SQRT2))
        x = d->input(0);
      else if (m && m->input_size() == 2 &&
               near(scalarValue(m->input(1)), M_SQRT1_2))
        x = m->input(0);
      else if (m && m->input_size() == 2 &&
               near(scalarValue(m->input(0)), M_SQRT1_2))
        x = m->input(1);
      else
        continue;
      if (!singleUse(n.input(0)))
        continue;
      group.push_back(d ? d : m);
      group.push_back(&n);
      if (const onnx::NodeProto *last = matchTail(&n, x, group)) {
        fusions[last] = Fusion{Fusion::Gelu, x, "none"};
        absorbed.insert(group.begin(), group.end());
      }
    } else if (n.op_type() == "Tanh") {
      // tanh(sqrt(2/pi) * (x + 0.044715 * x^3))
      const onnx::NodeProto *m = prod(n.input(0), "Mul");
      if (!m || m->input_size() != 2 || !singleUse(n.input(0)))
        continue;
      std::string inner;
      if (near(scalarValue(m->input(0)), 0.7978845608))
        inner = m->input(1);
      else if (near(scalarValue(m->input(1)), 0.7978845608))
        inner = m->input(0);
      else
        continue;
      const onnx::NodeProto *add = prod(inner, "Add");
      if (!add || add->input_size() != 2 || !singleUse(inner))
        continue;
      bool ok = false;
      for (int side = 0; side < 2 && !ok; ++side) {
        std::string cand = add->input(side), cube = add->input(1 - side);
        const onnx::NodeProto *mc = prod(cube, "Mul");
        if (!mc || mc->input_size() != 2 || !singleUse(cube))
          continue;
        std::string p;
        if (near(scalarValue(mc->input(0)), 0.044715))
          p = mc->input(1);
        else if (near(scalarValue(mc->input(1)), 0.044715))
          p = mc->input(0);
        else
          continue;
        const onnx::NodeProto *pw = prod(p, "Pow");
        if (!pw || pw->input_size() != 2 || pw->input(0) != cand ||
            !near(scalarValue(pw->input(1)), 3.0) || !singleUse(p))
          continue;
        x = cand;
        group.append({m, add, mc, pw, &n});
        ok = true;
      }
      if (!ok)
        continue;
      if (const onnx::NodeProto *last = matchTail(&n, x, group)) {
        fusions[last] = Fusion{Fusion::Gelu, x, "tanh"};
        absorbed.insert(group.begin(), group.end());
      }
    } else if (n.op_type() == "Sigmoid") {
      const onnx::NodeProto *m = soleConsumer(n.output(0), "Mul");
      if (m && other(m, n.output(0)) == n.input(0)) {
        fusions[m] = Fusion{Fusion::Silu, n.input(0), ""};
        absorbed.insert(&n);
      }
    } else if (n.op_type() == "HardSigmoid") {
      // Before opset 14 torch.onnx exports hardswish as x * HardSigmoid(x)
      // (alpha 1/6, beta 0.5).
      NodeAttrs a(n);
      double alpha = a.getFloat("alpha").value_or(0.2);
      double beta = a.getFloat("beta").value_or(0.5);
      if (std::fabs(alpha - 1.0 / 6) > 1e-4 || std::fabs(beta - 0.5) > 1e-6)
        continue;
      const onnx::NodeProto *m = soleConsumer(n.output(0), "Mul");
      if (m && other(m, n.output(0)) == n.input(0)) {
        fusions[m] = Fusion{Fusion::Hardswish, n.input(0), ""};
        absorbed.insert(&n);
      }
    } else if (n.op_type() == "ReduceMean") {
      matchLayerNorm(n);
    }
  }
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

const ConstTensor *Importer::constOf(StringRef name) {
  Entry *e = lookup(name);
  if (!e)
    return nullptr;
  if (e->kind == Entry::Const)
    return e->cst.get();
  // Integer initializers with their data in the file fold like constants.
  if (e->kind == Entry::Init && isIntegerDType(e->init->data_type())) {
    // Decoded once: callers hold the pointer (Reshape(x, x) asks twice).
    if (e->cst)
      return e->cst.get();
    ConstTensor c;
    std::string err;
    if (!decodeTensor(*e->init, c, err))
      return nullptr;
    e->cst = std::make_shared<ConstTensor>(std::move(c));
    return e->cst.get();
  }
  return nullptr;
}

Value Importer::materialize(const ConstTensor &c, Type elemType, Location loc) {
  auto type = RankedTensorType::get(c.shape, elemType);
  int64_t n = c.numElements();
  // One APFloat/APInt per element, or a splat when all are equal.
  auto build = [&](auto get, auto convert) {
    bool splat =
        n > 0 && llvm::all_of(llvm::seq<int64_t>(1, n),
                              [&](int64_t k) { return get(k) == get(0); });
    SmallVector<decltype(convert(get(0)))> vals;
    for (int64_t k = 0, e = splat ? 1 : n; k < e; ++k)
      vals.push_back(convert(get(k)));
    return DenseElementsAttr::get(type, ArrayRef(vals));
  };
  DenseElementsAttr attr;
  if (auto ft = dyn_cast<FloatType>(elemType)) {
    attr = build([&](int64_t k) { return c.getF(k); },
                 [&](double v) {
                   llvm::APFloat f(v);
                   bool lost;
                   f.convert(ft.getFloatSemantics(),
                             llvm::APFloat::rmNearestTiesToEven, &lost);
                   return f;
                 });
  } else {
    unsigned w = elemType.getIntOrFloatBitWidth();
    attr = build([&](int64_t k) { return c.getI(k); },
                 [&](int64_t v) {
                   return w == 1 ? llvm::APInt(1, v != 0)
                                 : llvm::APInt(w, v, /*isSigned=*/true,
                                               /*implicitTrunc=*/true);
                 });
  }
  return nn::ConstantOp::create(b, loc, attr);
}

FailureOr<Value> Importer::initValue(const onnx::TensorProto &t,
                                     bool transposed) {
  auto it = initValues.find(t.name());
  if (it != initValues.end()) {
    auto [v, isT] = it->second;
    if (isT == transposed)
      return v;
    // The other form of a 2-D initializer already exists: a transposed view.
    return make<nn::PermuteOp>(v.getLoc(), v, ArrayRef<int64_t>{1, 0});
  }
  Location loc = NameLoc::get(StringAttr::get(ctx, t.name()), fileLoc);
  auto et = elementType(t.data_type(), loc, "initializer '" + t.name() + "'");
  if (failed(et))
    return failure();
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  if (transposed)
    std::swap(dims[0], dims[1]);
  auto type = RankedTensorType::get(dims, *et);
  Value v;
  if (isBufferInit(t.name(), t))
    v = nn::BufferOp::create(b, loc, type, t.name());
  else
    v = nn::ParamOp::create(b, loc, type, t.name(), /*trainable=*/true);
  // Params and buffers go to the top of the body, in order of first use.
  Operation *op = v.getDefiningOp();
  if (lastInitOp)
    op->moveAfter(lastInitOp);
  else
    op->moveBefore(&op->getBlock()->front());
  lastInitOp = op;
  initValues[t.name()] = {v, transposed};
  return v;
}

FailureOr<Value> Importer::tensorOf(StringRef name, Location loc,
                                    Type constElemType) {
  Entry *e = lookup(name);
  if (!e)
    return emitError(loc) << "tensor '" << name << "' is not defined";
  switch (e->kind) {
  case Entry::Tensor:
    return e->value;
  case Entry::Const: {
    Type et = constElemType;
    if (!et) {
      auto r = elementType(e->cst->dtype, loc, "constant '" + name.str() + "'");
      if (failed(r))
        return failure();
      et = *r;
    }
    return materialize(*e->cst, et, loc);
  }
  case Entry::Init:
    return initValue(*e->init, /*transposed=*/false);
  case Entry::InitT: {
    auto v = initValue(*e->init, /*transposed=*/true);
    return v;
  }
  }
  return failure();
}

FailureOr<Value> Importer::tensor(const onnx::NodeProto &n, int idx,
                                  Type constElemType) {
  if (!hasInput(n, idx))
    return nodeError(n) << "input " << idx << " is missing";
  return tensorOf(n.input(idx), nodeLoc(n), constElemType);
}

/// A [out, in] weight for nn.linear from an initializer (stored as [out, in]
/// when `storedOutIn`, else as [in, out] as torch.onnx stores MatMul weights),
/// or a null value when `name` is not a 2-D float parameter.
FailureOr<Value> Importer::linearWeight(StringRef name, bool storedOutIn) {
  Entry *e = lookup(name);
  if (!e || (e->kind != Entry::Init && e->kind != Entry::InitT))
    return Value();
  const onnx::TensorProto &t = *e->init;
  if (t.dims_size() != 2 || !isFloatDType(t.data_type()) ||
      isBufferInit(t.name(), t))
    return Value();
  bool outIn = storedOutIn != (e->kind == Entry::InitT);
  return initValue(t, /*transposed=*/!outIn);
}

/// a * b, saturating instead of overflowing: strides and element counts of
/// tensors with a zero dim or of huge slice steps need not fit in int64.
static int64_t mulSat(int64_t a, int64_t b) {
  int64_t r;
  if (!__builtin_mul_overflow(a, b, &r))
    return r;
  return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
}

/// The strides PyTorch gives `v` relative to its storage: views (permute,
/// transpose, slice, expand, reshape) derive them from their input; any other
/// op makes a new contiguous tensor.
static SmallVector<int64_t> stridesOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  auto contiguous = [](ArrayRef<int64_t> shape) {
    SmallVector<int64_t> st(shape.size(), 1);
    for (int64_t k = (int64_t)shape.size() - 2; k >= 0; --k)
      st[k] = mulSat(st[k + 1], std::max<int64_t>(shape[k + 1], 1));
    return st;
  };
  Operation *def = v.getDefiningOp();
  if (!def)
    return contiguous(t.getShape());
  if (auto p = dyn_cast<nn::PermuteOp>(def)) {
    SmallVector<int64_t> in = stridesOf(p.getInput()), st;
    for (int64_t d : p.getDims())
      st.push_back(in[d]);
    return st;
  }
  if (auto tr = dyn_cast<nn::TransposeOp>(def)) {
    SmallVector<int64_t> st = stridesOf(tr.getInput());
    int64_t r = st.size(), d0 = tr.getDim0(), d1 = tr.getDim1();
    std::swap(st[d0 < 0 ? d0 + r : d0], st[d1 < 0 ? d1 + r : d1]);
    return st;
  }
  if (auto sl = dyn_cast<nn::SliceOp>(def)) {
    SmallVector<int64_t> st = stridesOf(sl.getInput());
    int64_t d =
        sl.getDim() < 0 ? sl.getDim() + (int64_t)st.size() : sl.getDim();
    st[d] = mulSat(st[d], sl.getStep());
    return st;
  }
  if (auto ex = dyn_cast<nn::ExpandOp>(def)) {
    SmallVector<int64_t> in = stridesOf(ex.getInput());
    auto it = cast<RankedTensorType>(ex.getInput().getType());
    int64_t off = t.getRank() - it.getRank();
    SmallVector<int64_t> st(t.getRank(), 0);
    for (int64_t k = 0; k < it.getRank(); ++k)
      st[k + off] = it.getDimSize(k) == t.getDimSize(k + off) ? in[k] : 0;
    return st;
  }
  if (isa<nn::ReshapeOp, nn::FlattenOp>(def)) {
    Value in = def->getOperand(0);
    auto it = cast<RankedTensorType>(in.getType());
    // at::detail::computeStride: the reshape was emitted as a view, so it
    // succeeds.
    SmallVector<int64_t> old = stridesOf(in);
    ArrayRef<int64_t> oldShape = it.getShape(), newShape = t.getShape();
    if (it.getNumElements() == 0 || oldShape.empty())
      return contiguous(newShape);
    SmallVector<int64_t> st(newShape.size(), 1);
    int64_t viewD = (int64_t)newShape.size() - 1;
    int64_t chunk = old.back(), tensorNumel = 1, viewNumel = 1;
    for (int64_t d = (int64_t)oldShape.size() - 1; d >= 0; --d) {
      tensorNumel = mulSat(tensorNumel, oldShape[d]);
      if (d == 0 ||
          (oldShape[d - 1] != 1 && old[d - 1] != mulSat(tensorNumel, chunk))) {
        while (viewD >= 0 &&
               (viewNumel < tensorNumel || newShape[viewD] == 1)) {
          st[viewD] = mulSat(viewNumel, chunk);
          viewNumel = mulSat(viewNumel, newShape[viewD]);
          --viewD;
        }
        if (viewNumel != tensorNumel)
          return contiguous(newShape);
        if (d > 0) {
          chunk = old[d - 1];
          tensorNumel = 1;
          viewNumel = 1;
        }
      }
    }
    return st;
  }
  return contiguous(t.getShape());
}

/// Whether PyTorch can view `v` with `shape` (at::detail::computeStride).
static bool viewable(Value v, ArrayRef<int64_t> newShape) {
  auto it = cast<RankedTensorType>(v.getType());
  ArrayRef<int64_t> oldShape = it.getShape();
  if (it.getNumElements() == 0 || oldShape.empty())
    return true;
  SmallVector<int64_t> old = stridesOf(v);
  int64_t viewD = (int64_t)newShape.size() - 1;
  int64_t chunk = old.back(), tensorNumel = 1, viewNumel = 1;
  for (int64_t d = (int64_t)oldShape.size() - 1; d >= 0; --d) {
    tensorNumel = mulSat(tensorNumel, oldShape[d]);
    if (d == 0 ||
        (oldShape[d - 1] != 1 && old[d - 1] != mulSat(tensorNumel, chunk))) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newShape[viewD] == 1)) {
        viewNumel = mulSat(viewNumel, newShape[viewD]);
        --viewD;
      }
      if (viewNumel != tensorNumel)
        return false;
      if (d > 0) {
        chunk = old[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  return viewD == -1;
}

/// `v`, or a contiguous copy of it when its strides cannot be viewed as
/// `shape`: PyTorch's reshape copies then, and torchvision's
/// `.contiguous().view()` (the exporter drops the contiguous) too.
Value Importer::contiguousFor(Value v, ArrayRef<int64_t> shape, Location loc) {
  if (viewable(v, shape))
    return v;
  return nn::ContiguousOp::create(b, loc, v.getType(), v).getResult();
}

FailureOr<Value> Importer::reshapeTo(Value v, ArrayRef<int64_t> shape,
                                     Location loc) {
  auto in = cast<RankedTensorType>(v.getType());
  if (in.getShape() == shape)
    return v;
  auto out = RankedTensorType::get(shape, in.getElementType());
  if (in.getNumElements() != out.getNumElements())
    return emitError(loc) << "cannot reshape " << in << " to " << out;
  v = contiguousFor(v, shape, loc);
  return nn::ReshapeOp::create(b, loc, out, v).getResult();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

static bool isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

LogicalResult Importer::emitNode(const onnx::NodeProto &n) {
  StringRef op = n.op_type();
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return nodeError(n) << "unsupported op '" << n.domain() << "::" << op
                        << "'; supported ops (default domain): "
                        << supportedOpsList();
  if (absorbed.count(&n))
    return success();
  auto fit = fusions.find(&n);
  if (fit != fusions.end())
    return emitFusion(n, fit->second);

  NodeAttrs attrs(n);
  // Constant folding: every input is a constant (Shape only needs shapes).
  if (op == "Shape") {
    if (!hasInput(n, 0) || n.output_size() < 1)
      return nodeError(n) << "needs one input and one output";
    Entry *e = lookup(n.input(0));
    if (!e)
      return nodeError(n) << "input '" << n.input(0) << "' has no value";
    SmallVector<int64_t> shape;
    if (e->kind == Entry::Tensor)
      shape.assign(
          cast<RankedTensorType>(e->value.getType()).getShape().begin(),
          cast<RankedTensorType>(e->value.getType()).getShape().end());
    else if (e->kind == Entry::Const)
      shape.assign(e->cst->shape.begin(), e->cst->shape.end());
    else {
      shape.assign(e->init->dims().begin(), e->init->dims().end());
      if (e->kind == Entry::InitT)
        std::swap(shape[0], shape[1]);
    }
    int64_t rank = shape.size();
    int64_t start = attrs.getInt("start").value_or(0);
    int64_t end = attrs.getInt("end").value_or(rank);
    if (start < 0)
      start += rank;
    if (end < 0)
      end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    ConstTensor c = ConstTensor::make(DT_INT64, {end - start});
    for (int64_t k = start; k < end; ++k)
      c.i[k - start] = shape[k];
    setConst(n.output(0), std::move(c));
    return success();
  }
  if (isFoldableOp(op)) {
    SmallVector<const ConstTensor *> ins;
    bool allConst = true;
    for (int k = 0; k < n.input_size(); ++k) {
      if (n.input(k).empty()) {
        ins.push_back(nullptr);
        continue;
      }
      const ConstTensor *c = constOf(n.input(k));
      if (!c) {
        allConst = false;
        break;
      }
      ins.push_back(c);
    }
    if (allConst) {
      std::vector<ConstTensor> outs;
      std::string err;
      if (!foldOp(op, ins, attrs, n.output_size(), outs, err))
        return nodeError(n) << "cannot fold this constant computation: " << err;
      for (size_t k = 0; k < outs.size() && (int)k < n.output_size(); ++k)
        setConst(n.output(k), std::move(outs[k]));
      return success();
    }
  }

  if (op == "Identity") {
    Entry *e = hasInput(n, 0) ? lookup(n.input(0)) : nullptr;
    if (!e || n.output_size() < 1)
      return nodeError(n) << "needs a defined input and an output";
    // An eval-mode torch.onnx export deduplicates parameters with equal
    // values (zero-initialized biases, ones-initialized scales) and names
    // each duplicate by an Identity of the one it kept: restore it as its own
    // parameter.
    StringRef out = n.output(0);
    if (e->kind == Entry::Init && isFloatDType(e->init->data_type()) &&
        !isBufferInit(e->init->name(), *e->init) && !out.starts_with("/") &&
        !out.starts_with("onnx::") && !graphOutputs.count(out) &&
        !inits.count(out)) {
      onnx::TensorProto &t = restoredInits.emplace_back(*e->init);
      t.set_name(out.str());
      inits[out] = &t;
      Entry r;
      r.kind = Entry::Init;
      r.init = &t;
      env[out] = r;
      return success();
    }
    env[n.output(0)] = *e;
    return success();
  }
  if (op == "Conv")
    return emitConv(n);
  if (op == "MaxPool" || op == "AveragePool" || op == "GlobalAveragePool")
    return emitPool(n);
  if (op == "BatchNormalization")
    return emitBatchNorm(n);
  if (op == "LayerNormalization")
    return emitLayerNorm(n);
  if (op == "MatMul")
    return emitMatMul(n);
  if (op == "Gemm")
    return emitGemm(n);
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
    return emitBinary(n);
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "HardSwish" ||
      op == "HardSigmoid" || op == "Clip" || op == "Softmax" ||
      op == "LogSoftmax" || op == "Dropout" || op == "Gelu" || op == "Cast")
    return emitUnary(n);
  if (op == "Gather")
    return emitGather(n);
  if (op == "Reshape" || op == "Flatten" || op == "Unsqueeze" ||
      op == "Squeeze" || op == "Transpose" || op == "Expand" || op == "Concat")
    return emitShapeOp(n);
  if (op == "Slice")
    return emitSlice(n);
  if (op == "Split")
    return emitSplit(n);
  if (op == "Where")
    return emitWhere(n);
  if (op == "ReduceMean")
    return emitReduceMean(n);
  if (op == "Pad")
    return emitPad(n);
  if (op == "Pow" || op == "Sqrt" || op == "Reciprocal" || op == "Exp" ||
      op == "Neg")
    return emitElementwise(n);
  if (op == "Erf" || op == "Not" || op == "Equal" || op == "Trilu" ||
      op == "Range" || op == "ConstantOfShape")
    return nodeError(n) << "unsupported op '" << op
                        << "' on non-constant tensors (only its use in a "
                           "GELU or LayerNorm pattern or on constants is "
                           "supported)";
  return nodeError(n) << "unsupported op '" << op
                      << "'; supported ops: " << supportedOpsList();
}

LogicalResult Importer::emitFusion(const onnx::NodeProto &n, const Fusion &f) {
  Location loc = nodeLoc(n);
  auto x = tensorOf(f.input, loc);
  if (failed(x))
    return failure();
  if (!isFloatTensor(*x))
    return nodeError(n) << "expects a floating-point input";
  Value r;
  if (f.kind == Fusion::Gelu) {
    r = nn::GeluOp::create(b, loc, x->getType(), *x,
                            *nn::symbolizeGeluApproximation(f.approximate));
  } else if (f.kind == Fusion::Silu) {
    r = nn::SiluOp::create(b, loc, x->getType(), *x, /*inplace=*/false);
  } else if (f.kind == Fusion::Hardswish) {
    r = nn::HardswishOp::create(b, loc, x->getType(), *x, /*inplace=*/false);
  } else {
    Value w, bias;
    if (!f.weight.empty()) {
      auto t = tensorOf(f.weight, loc);
      if (failed(t))
        return failure();
      w = *t;
    }
    if (!f.bias.empty()) {
      auto t = tensorOf(f.bias, loc);
      if (failed(t))
        return failure();
      bias = *t;
    }
    if (f.normalizedRank > cast<RankedTensorType>(x->getType()).getRank())
      return nodeError(n) << "layer norm over " << f.normalizedRank
                          << " dims of a rank "
                          << cast<RankedTensorType>(x->getType()).getRank()
                          << " tensor";
    auto ln = make<nn::LayerNormOp>(loc, *x, w, bias,
                                    b.getI64IntegerAttr(f.normalizedRank),
                                    b.getF64FloatAttr(f.eps));
    if (failed(ln))
      return failure();
    r = *ln;
  }
  setTensor(n, 0, r);
  return success();
}

static SmallVector<int64_t> ints2(std::optional<std::vector<int64_t>> v,
                                  int64_t dflt) {
  if (!v || v->empty())
    return {dflt, dflt};
  return SmallVector<int64_t>(v->begin(), v->end());
}

/// Symmetric 2-D padding from ONNX pads [top, left, bottom, right] or
/// auto_pad; fails for asymmetric padding.
static LogicalResult padding2d(const NodeAttrs &a, ArrayRef<int64_t> inHW,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides, ArrayRef<int64_t> dil,
                               SmallVectorImpl<int64_t> &pad,
                               std::string &err) {
  std::string autoPad = a.getString("auto_pad").value_or("NOTSET");
  pad.assign({0, 0});
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int k = 0; k < 2; ++k) {
      int64_t out = (inHW[k] + strides[k] - 1) / strides[k];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[k] + (kernel[k] - 1) * dil[k] + 1 - inHW[k]);
      if (total % 2) {
        err = "auto_pad " + autoPad + " needs asymmetric padding";
        return failure();
      }
      pad[k] = total / 2;
    }
    return success();
  }
  if (autoPad == "VALID")
    return success();
  if (autoPad != "NOTSET" && !autoPad.empty()) {
    err = "unknown auto_pad '" + autoPad + "'";
    return failure();
  }
  auto pads = a.getInts("pads");
  if (!pads || pads->empty())
    return success();
  if (pads->size() != 4) {
    err = "expects 4 pads for a 2-D op";
    return failure();
  }
  if ((*pads)[0] != (*pads)[2] || (*pads)[1] != (*pads)[3]) {
    err = "asymmetric padding is not supported";
    return failure();
  }
  pad.assign({(*pads)[0], (*pads)[1]});
  return success();
}

LogicalResult Importer::emitConv(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  auto x = tensor(n, 0);
  auto w = tensor(n, 1);
  if (failed(x) || failed(w))
    return failure();
  Value bias;
  if (hasInput(n, 2)) {
    auto bv = tensor(n, 2);
    if (failed(bv))
      return failure();
    bias = *bv;
  }
  auto xt = cast<RankedTensorType>(x->getType());
  auto wt = cast<RankedTensorType>(w->getType());
  if (xt.getRank() != 4 || wt.getRank() != 4)
    return nodeError(n) << "only 2-D convolution (NCHW input, 4-D weight) is "
                           "supported, got input "
                        << xt << " and weight " << wt;
  if (!isFloatTensor(*x) || !isFloatTensor(*w))
    return nodeError(n) << "expects floating-point input and weight";
  SmallVector<int64_t> strides = ints2(a.getInts("strides"), 1);
  SmallVector<int64_t> dil = ints2(a.getInts("dilations"), 1);
  SmallVector<int64_t> kernel{wt.getDimSize(2), wt.getDimSize(3)};
  if (strides.size() != 2 || dil.size() != 2)
    return nodeError(n) << "expects 2 strides and dilations";
  SmallVector<int64_t> pad;
  std::string err;
  if (failed(padding2d(a, xt.getShape().drop_front(2), kernel, strides, dil,
                       pad, err)))
    return nodeError(n) << err;
  int64_t groups = a.getInt("group").value_or(1);
  auto r = make<nn::Conv2dOp>(
      loc, *x, *w, bias, b.getDenseI64ArrayAttr(strides),
      b.getDenseI64ArrayAttr(pad), b.getDenseI64ArrayAttr(dil),
      b.getI64IntegerAttr(groups));
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitPool(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  if (xt.getRank() != 4 || !isFloatTensor(*x))
    return nodeError(n)
           << "only 2-D pooling of a floating-point NCHW tensor is "
              "supported, got "
           << xt;
  FailureOr<Value> r;
  if (n.op_type() == "GlobalAveragePool") {
    r = make<nn::AdaptiveAvgPool2dOp>(loc, *x, ArrayRef<int64_t>{1, 1});
  } else {
    auto k = a.getInts("kernel_shape");
    if (!k || k->size() != 2)
      return nodeError(n) << "expects a 2-D kernel_shape";
    SmallVector<int64_t> kernel(k->begin(), k->end());
    SmallVector<int64_t> strides = ints2(a.getInts("strides"), 1);
    SmallVector<int64_t> dil = ints2(a.getInts("dilations"), 1);
    if (strides.size() != 2 || dil.size() != 2)
      return nodeError(n) << "expects 2 strides and dilations";
    SmallVector<int64_t> pad;
    std::string err;
    if (failed(padding2d(a, xt.getShape().drop_front(2), kernel, strides, dil,
                         pad, err)))
      return nodeError(n) << err;
    bool ceil = a.getInt("ceil_mode").value_or(0);
    if (n.op_type() == "MaxPool") {
      if (n.output_size() > 1 && !n.output(1).empty() &&
          consumers.count(n.output(1)))
        return nodeError(n) << "the Indices output is not supported";
      r = make<nn::MaxPool2dOp>(
          loc, *x, b.getDenseI64ArrayAttr(kernel),
          b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pad),
          b.getDenseI64ArrayAttr(dil), ceil ? b.getUnitAttr() : UnitAttr());
    } else {
      if (dil != SmallVector<int64_t>{1, 1})
        return nodeError(n) << "dilated average pooling is not supported";
      bool countPad = a.getInt("count_include_pad").value_or(0);
      r = make<nn::AvgPool2dOp>(
          loc, *x, b.getDenseI64ArrayAttr(kernel),
          b.getDenseI64ArrayAttr(strides), b.getDenseI64ArrayAttr(pad),
          ceil ? b.getUnitAttr() : UnitAttr(), b.getBoolAttr(countPad));
    }
  }
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitBatchNorm(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  if (n.input_size() < 5)
    return nodeError(n) << "expects 5 inputs (X, scale, B, mean, var)";
  SmallVector<Value, 5> v;
  for (int k = 0; k < 5; ++k) {
    auto t = tensor(n, k);
    if (failed(t))
      return failure();
    if (!isFloatTensor(*t))
      return nodeError(n) << "input " << k << " is not a floating-point tensor";
    v.push_back(*t);
  }
  double eps = a.getFloat("epsilon").value_or(1e-5);
  // ONNX: running = running * momentum + batch * (1 - momentum);
  // PyTorch's momentum is the weight of the batch statistics.
  double momentum = roundToFloat(1.0 - a.getFloat("momentum").value_or(0.9));
  auto r = make<nn::BatchNormOp>(loc, v[0], v[1], v[2], v[3], v[4],
                                 b.getF64FloatAttr(eps),
                                 b.getF64FloatAttr(momentum));
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  // Training-mode outputs 1 and 2 are the updated running statistics: the
  // buffers themselves (updated in place).
  for (int k = 1; k < n.output_size() && k < 3; ++k)
    if (!n.output(k).empty())
      setTensor(n, k, v[k + 2]);
  return success();
}

LogicalResult Importer::emitLayerNorm(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  Value w, bias;
  if (hasInput(n, 1)) {
    auto t = tensor(n, 1);
    if (failed(t))
      return failure();
    w = *t;
  }
  if (hasInput(n, 2)) {
    auto t = tensor(n, 2);
    if (failed(t))
      return failure();
    bias = *t;
  }
  for (int k = 1; k < n.output_size(); ++k)
    if (!n.output(k).empty() && consumers.count(n.output(k)))
      return nodeError(n) << "the Mean and InvStdDev outputs are not supported";
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  int64_t axis = a.getInt("axis").value_or(-1);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return nodeError(n) << "axis " << a.getInt("axis").value_or(-1)
                        << " is out of range for rank " << rank;
  auto r = make<nn::LayerNormOp>(
      loc, *x, w, bias, b.getI64IntegerAttr(rank - axis),
      b.getF64FloatAttr(a.getFloat("epsilon").value_or(1e-5)));
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitMatMul(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  if (!hasInput(n, 0) || !hasInput(n, 1))
    return nodeError(n) << "expects two inputs";
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  // torch.onnx exports nn.Linear on >2-D inputs as MatMul with the weight
  // ([in, out] initializer, or Transpose of the [out, in] one) + Add(bias).
  auto w = linearWeight(n.input(1), /*storedOutIn=*/false);
  if (failed(w))
    return failure();
  if (*w) {
    // PyTorch folds a >2-D input to [-1, in] with reshape (a copy, which mm
    // then keeps, when the input is a non-viewable strided view).
    auto xt = cast<RankedTensorType>(x->getType());
    if (xt.getRank() > 2) {
      int64_t rows = 1;
      for (int64_t k = 0; k + 1 < xt.getRank(); ++k)
        rows = mulSat(rows, xt.getDimSize(k)); // a 0 dim allows any others
      *x = contiguousFor(*x, {rows, xt.getShape().back()}, loc);
    }
    auto r = make<nn::LinearOp>(loc, *x, *w, Value());
    if (failed(r))
      return failure();
    biaslessLinear[n.output(0)] = r->getDefiningOp<nn::LinearOp>();
    setTensor(n, 0, *r);
    return success();
  }
  auto y = tensor(n, 1);
  if (failed(y))
    return failure();
  if (cast<RankedTensorType>(x->getType()).getRank() < 2 ||
      cast<RankedTensorType>(y->getType()).getRank() < 2)
    return nodeError(n) << "MatMul of 1-D tensors is not supported";
  // torch.matmul beyond bmm (rank > 3, or a batched lhs and a 2-D rhs)
  // reshapes its operands to 3-D (2-D) for bmm (mm), copying a strided view
  // that cannot be viewed so; the backward keeps the copies.
  {
    auto lt = cast<RankedTensorType>(x->getType()),
         rt = cast<RankedTensorType>(y->getType());
    int64_t lr = lt.getRank(), rr = rt.getRank();
    auto prod = [](ArrayRef<int64_t> d) {
      int64_t p = 1;
      for (int64_t v : d)
        p = mulSat(p, v); // a 0 dim allows any others
      return p;
    };
    if (lr >= 3 && rr == 2) {
      *x = contiguousFor(
          *x, {prod(lt.getShape().drop_back()), lt.getShape().back()}, loc);
    } else if (lr >= 3 && rr >= 3 && !(lr == 3 && rr == 3)) {
      auto batch = broadcastShapes(lt.getShape().drop_back(2),
                                   rt.getShape().drop_back(2));
      if (batch) {
        int64_t nb = prod(*batch);
        if (ArrayRef<int64_t>(*batch) == lt.getShape().drop_back(2))
          *x = contiguousFor(
              *x, {nb, lt.getDimSize(lr - 2), lt.getDimSize(lr - 1)}, loc);
        if (ArrayRef<int64_t>(*batch) == rt.getShape().drop_back(2))
          *y = contiguousFor(
              *y, {nb, rt.getDimSize(rr - 2), rt.getDimSize(rr - 1)}, loc);
      }
    }
  }
  auto r = make<nn::MatmulOp>(loc, *x, *y);
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitGemm(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  if (a.getInt("transA").value_or(0))
    return nodeError(n) << "transA=1 is not supported";
  if (a.getFloat("alpha").value_or(1.0) != 1.0 ||
      a.getFloat("beta").value_or(1.0) != 1.0)
    return nodeError(n) << "alpha and beta other than 1 are not supported";
  bool transB = a.getInt("transB").value_or(0);
  if (!hasInput(n, 0) || !hasInput(n, 1))
    return nodeError(n) << "expects two inputs";
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  auto w = linearWeight(n.input(1), /*storedOutIn=*/transB);
  if (failed(w))
    return failure();
  Value bias;
  bool biasInLinear = false;
  if (hasInput(n, 2) && *w) {
    Entry *e = lookup(n.input(2));
    if (e && e->kind == Entry::Init && e->init->dims_size() == 1) {
      auto bv = tensor(n, 2);
      if (failed(bv))
        return failure();
      bias = *bv;
      biasInLinear = true;
    }
  }
  FailureOr<Value> r;
  if (*w) {
    r = make<nn::LinearOp>(loc, *x, *w, bias);
  } else {
    auto y = tensor(n, 1);
    if (failed(y))
      return failure();
    Value rhs = *y;
    if (transB) {
      auto p = make<nn::PermuteOp>(loc, rhs, ArrayRef<int64_t>{1, 0});
      if (failed(p))
        return failure();
      rhs = *p;
    }
    r = make<nn::MatmulOp>(loc, *x, rhs);
  }
  if (failed(r))
    return failure();
  if (hasInput(n, 2) && !biasInLinear) {
    auto c =
        tensor(n, 2, cast<RankedTensorType>(r->getType()).getElementType());
    if (failed(c))
      return failure();
    r = make<nn::AddOp>(loc, *r, *c, false);
    if (failed(r))
      return failure();
  }
  setTensor(n, 0, *r);
  return success();
}

/// PyTorch's in-place idioms that ONNX loses: torchvision writes
/// `nn.ReLU(inplace=True)` after BatchNorm and after the residual
/// `out += identity`. We treat an op as in place when its (first) input is
/// the output of a BatchNormalization or an Add that nothing else reads; this
/// matches torchvision's ResNets and is what decides the memory that autograd
/// saves (the result shares the input's storage).
static bool inplaceCandidate(const onnx::NodeProto *producerNode,
                             bool singleUse) {
  if (!producerNode || !singleUse)
    return false;
  StringRef op = producerNode->op_type();
  return op == "BatchNormalization" || op == "Add";
}

LogicalResult Importer::emitBinary(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  StringRef op = n.op_type();
  if (!hasInput(n, 0) || !hasInput(n, 1))
    return nodeError(n) << "expects two inputs";
  // nn.Linear exported as MatMul + Add(bias): fold the bias into nn.linear.
  if (op == "Add") {
    for (int side = 0; side < 2; ++side) {
      StringRef mm = n.input(side), bn = n.input(1 - side);
      auto it = biaslessLinear.find(mm);
      Entry *be = lookup(bn);
      if (it == biaslessLinear.end() || !singleUse(mm) || !be ||
          be->kind != Entry::Init || be->init->dims_size() != 1 ||
          !isFloatDType(be->init->data_type()))
        continue;
      nn::LinearOp lin = it->second;
      auto wt = cast<RankedTensorType>(lin.getWeight().getType());
      if (be->init->dims(0) != wt.getDimSize(0))
        continue;
      auto bias = tensorOf(bn, loc);
      if (failed(bias))
        return failure();
      b.setInsertionPoint(lin);
      auto r = make<nn::LinearOp>(lin.getLoc(), lin.getInput(), lin.getWeight(),
                                  *bias);
      b.setInsertionPointToEnd(lin->getBlock());
      if (failed(r))
        return failure();
      lin->replaceAllUsesWith(r->getDefiningOp());
      lin->erase();
      biaslessLinear.erase(it);
      setTensor(n, 0, *r);
      return success();
    }
  }
  // A constant operand takes the element type of the other one.
  const ConstTensor *c0 = constInput(n, 0), *c1 = constInput(n, 1);
  FailureOr<Value> lhs = failure(), rhs = failure();
  if (c0 && !c1) {
    rhs = tensor(n, 1);
    if (failed(rhs))
      return failure();
    lhs = tensor(n, 0, cast<RankedTensorType>(rhs->getType()).getElementType());
  } else {
    lhs = tensor(n, 0);
    if (failed(lhs))
      return failure();
    rhs = tensor(n, 1, cast<RankedTensorType>(lhs->getType()).getElementType());
  }
  if (failed(lhs) || failed(rhs))
    return failure();
  if (!isFloatTensor(*lhs) || !isFloatTensor(*rhs))
    return nodeError(n) << "arithmetic on integer tensors is only supported "
                           "when it folds to a constant";
  FailureOr<Value> r;
  if (op == "Add") {
    auto pit = producer.find(n.input(0));
    bool inplace = inplaceCandidate(
        pit == producer.end() ? nullptr : pit->second, singleUse(n.input(0)));
    if (inplace) { // only when the result keeps the lhs shape
      auto s =
          broadcastShapes(cast<RankedTensorType>(lhs->getType()).getShape(),
                          cast<RankedTensorType>(rhs->getType()).getShape());
      inplace = s && ArrayRef<int64_t>(*s) ==
                         cast<RankedTensorType>(lhs->getType()).getShape();
    }
    r = make<nn::AddOp>(loc, *lhs, *rhs, inplace);
  } else if (op == "Sub") {
    r = make<nn::SubOp>(loc, *lhs, *rhs, false);
  } else if (op == "Mul") {
    r = make<nn::MulOp>(loc, *lhs, *rhs, false);
  } else {
    r = make<nn::DivOp>(loc, *lhs, *rhs, false);
  }
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

/// Elementwise math on activations, as in a hand-written RMSNorm
/// (x * (x.pow(2).mean(-1) + eps).rsqrt()): kept as written, not raised.
LogicalResult Importer::emitElementwise(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  StringRef op = n.op_type();
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  if (!isFloatTensor(*x))
    return nodeError(n) << "expects a floating-point tensor, got "
                        << x->getType();
  Type type = x->getType();
  Value r;
  if (op == "Pow") {
    const ConstTensor *e = constInput(n, 1);
    if (!e || e->numElements() != 1)
      return nodeError(n) << "only a constant scalar exponent is supported";
    r = nn::PowOp::create(b, loc, type, *x, llvm::APFloat(e->getF(0)));
  } else if (op == "Sqrt") {
    r = nn::SqrtOp::create(b, loc, type, *x);
  } else if (op == "Reciprocal") {
    r = nn::ReciprocalOp::create(b, loc, type, *x);
  } else if (op == "Exp") {
    r = nn::ExpOp::create(b, loc, type, *x);
  } else {
    r = nn::NegOp::create(b, loc, type, *x);
  }
  setTensor(n, 0, r);
  return success();
}

LogicalResult Importer::emitUnary(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  StringRef op = n.op_type();
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  Type type = x->getType();
  if (op == "Cast") {
    auto to = a.getInt("to");
    auto et = elementType(to.value_or(0), loc, "Cast target");
    if (failed(et))
      return failure();
    if (cast<RankedTensorType>(type).getElementType() != *et)
      return nodeError(n) << "casting an activation from "
                          << cast<RankedTensorType>(type).getElementType()
                          << " to " << *et
                          << " is not supported (needs a cast op)";
    setTensor(n, 0, *x);
    return success();
  }
  if (!isFloatTensor(*x))
    return nodeError(n) << "expects a floating-point tensor, got " << type;
  int64_t rank = cast<RankedTensorType>(type).getRank();
  Value r;
  if (op == "Relu") {
    auto pit = producer.find(n.input(0));
    bool inplace = inplaceCandidate(
        pit == producer.end() ? nullptr : pit->second, singleUse(n.input(0)));
    r = nn::ReluOp::create(b, loc, type, *x, inplace);
  } else if (op == "Sigmoid") {
    r = nn::SigmoidOp::create(b, loc, type, *x);
  } else if (op == "Tanh") {
    r = nn::TanhOp::create(b, loc, type, *x);
  } else if (op == "HardSwish") {
    r = nn::HardswishOp::create(b, loc, type, *x, false);
  } else if (op == "HardSigmoid") {
    double alpha = a.getFloat("alpha").value_or(0.2),
           beta = a.getFloat("beta").value_or(0.5);
    if (std::fabs(alpha - 1.0 / 6) > 1e-4 || std::fabs(beta - 0.5) > 1e-6)
      return nodeError(n) << "only alpha=1/6, beta=0.5 (torch.nn.Hardsigmoid) "
                             "is supported, got alpha="
                          << alpha << " beta=" << beta;
    r = nn::HardsigmoidOp::create(b, loc, type, *x, false);
  } else if (op == "Clip") {
    std::optional<double> lo = a.getFloat("min"), hi = a.getFloat("max");
    if (hasInput(n, 1)) {
      const ConstTensor *c = constInput(n, 1);
      if (!c || c->numElements() != 1)
        return nodeError(n) << "min must be a constant scalar";
      lo = c->getF(0);
    }
    if (hasInput(n, 2)) {
      const ConstTensor *c = constInput(n, 2);
      if (!c || c->numElements() != 1)
        return nodeError(n) << "max must be a constant scalar";
      hi = c->getF(0);
    }
    if (lo && *lo == 0 && hi && *hi == 6)
      r = nn::Relu6Op::create(b, loc, type, *x, false);
    else if (lo && *lo == 0 && !hi)
      r = nn::ReluOp::create(b, loc, type, *x, false);
    else
      return nodeError(n) << "only Clip(0, 6) (ReLU6) and Clip(0, inf) (ReLU) "
                             "are supported";
  } else if (op == "Softmax" || op == "LogSoftmax") {
    int64_t axis = a.getInt("axis").value_or(opset < 13 ? 1 : -1);
    int64_t norm = axis < 0 ? axis + rank : axis;
    if (norm < 0 || norm >= rank)
      return nodeError(n) << "axis " << axis << " is out of range for rank "
                          << rank;
    if (opset < 13 && norm != rank - 1)
      return nodeError(n) << "opset " << opset
                          << " softmax over a non-last axis (flattening "
                             "semantics) is not supported";
    if (op == "Softmax")
      r = nn::SoftmaxOp::create(b, loc, type, *x, b.getI64IntegerAttr(norm));
    else
      r = nn::LogSoftmaxOp::create(b, loc, type, *x, b.getI64IntegerAttr(norm));
  } else if (op == "Dropout") {
    double p = a.getFloat("ratio").value_or(0.5);
    if (hasInput(n, 1)) {
      const ConstTensor *c = constInput(n, 1);
      if (!c || c->numElements() != 1)
        return nodeError(n) << "ratio must be a constant scalar";
      p = c->getF(0);
    }
    if (n.output_size() > 1 && !n.output(1).empty() &&
        consumers.count(n.output(1)))
      return nodeError(n) << "the mask output is not supported";
    if (!(p >= 0 && p <= 1))
      return nodeError(n) << "ratio " << p << " is not in [0, 1]";
    r = nn::DropoutOp::create(b, loc, type, *x, b.getF64FloatAttr(p),
                              UnitAttr());
  } else if (op == "Gelu") {
    std::string approx = a.getString("approximate").value_or("none");
    if (approx != "none" && approx != "tanh")
      return nodeError(n) << "unknown approximate '" << approx << "'";
    r = nn::GeluOp::create(b, loc, type, *x,
                            *nn::symbolizeGeluApproximation(approx));
  } else {
    return nodeError(n) << "unsupported op '" << op << "'";
  }
  setTensor(n, 0, r);
  return success();
}

LogicalResult Importer::emitGather(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  if (!hasInput(n, 0) || !hasInput(n, 1))
    return nodeError(n) << "expects two inputs";
  int64_t axis = a.getInt("axis").value_or(0);
  Entry *data = lookup(n.input(0));
  // Gather of rows of a float initializer: an embedding lookup.
  if (data && data->kind == Entry::Init &&
      isFloatDType(data->init->data_type())) {
    if (data->init->dims_size() != 2 || axis != 0)
      return nodeError(n) << "only row lookup (axis 0) of a 2-D weight is "
                             "supported as an embedding";
    auto w = tensor(n, 0);
    auto idx = tensor(n, 1);
    if (failed(w) || failed(idx))
      return failure();
    auto it = cast<RankedTensorType>(idx->getType());
    if (!isa<IntegerType>(it.getElementType()))
      return nodeError(n) << "embedding indices must be integers, got " << it;
    auto r = make<nn::EmbeddingOp>(loc, *w, *idx, IntegerAttr());
    if (failed(r))
      return failure();
    setTensor(n, 0, *r);
    return success();
  }
  // Selecting with constant indices along a dim of an activation: a slice.
  const ConstTensor *idx = constInput(n, 1);
  if (!idx || idx->numElements() != 1)
    return nodeError(n) << "Gather on an activation needs one constant index";
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return nodeError(n) << "axis is out of range for rank " << rank;
  int64_t i = idx->getI(0), dim = xt.getDimSize(axis);
  if (i < 0)
    i += dim;
  if (i < 0 || i >= dim)
    return nodeError(n) << "index " << idx->getI(0)
                        << " is out of range for size " << dim;
  auto s = make<nn::SliceOp>(loc, *x, b.getI64IntegerAttr(axis),
                             b.getI64IntegerAttr(i), b.getI64IntegerAttr(i + 1),
                             b.getI64IntegerAttr(1));
  if (failed(s))
    return failure();
  SmallVector<int64_t> shape(xt.getShape());
  shape.erase(shape.begin() + axis);
  shape.insert(shape.begin() + axis, idx->shape.begin(), idx->shape.end());
  auto r = reshapeTo(*s, shape, loc);
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitShapeOp(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  StringRef op = n.op_type();
  if (op == "Transpose") {
    Entry *e = hasInput(n, 0) ? lookup(n.input(0)) : nullptr;
    auto permA = a.getInts("perm");
    // Transpose of a 2-D initializer stays lazy: a following MatMul uses the
    // initializer directly as an nn.linear weight.
    if (e && e->kind == Entry::Init && e->init->dims_size() == 2 &&
        (!permA || *permA == std::vector<int64_t>{1, 0})) {
      Entry t = *e;
      t.kind = Entry::InitT;
      env[n.output(0)] = t;
      return success();
    }
    auto x = tensor(n, 0);
    if (failed(x))
      return failure();
    int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
    SmallVector<int64_t> perm;
    if (permA)
      perm.assign(permA->begin(), permA->end());
    else
      for (int64_t k = rank - 1; k >= 0; --k)
        perm.push_back(k);
    auto r = make<nn::PermuteOp>(loc, *x, ArrayRef<int64_t>(perm));
    if (failed(r))
      return failure();
    setTensor(n, 0, *r);
    return success();
  }
  if (op == "Concat") {
    SmallVector<Value> vals;
    Type et;
    for (int k = 0; k < n.input_size(); ++k)
      if (!constInput(n, k) && hasInput(n, k)) {
        auto v = tensor(n, k);
        if (failed(v))
          return failure();
        et = cast<RankedTensorType>(v->getType()).getElementType();
        break;
      }
    for (int k = 0; k < n.input_size(); ++k) {
      if (!hasInput(n, k))
        continue;
      auto v = tensor(n, k, et);
      if (failed(v))
        return failure();
      vals.push_back(*v);
    }
    if (vals.empty())
      return nodeError(n) << "expects at least one input";
    int64_t rank = cast<RankedTensorType>(vals[0].getType()).getRank();
    int64_t axis = a.getInt("axis").value_or(0);
    if (axis < 0)
      axis += rank;
    auto r =
        make<nn::ConcatOp>(loc, ValueRange(vals), b.getI64IntegerAttr(axis));
    if (failed(r))
      return failure();
    setTensor(n, 0, *r);
    return success();
  }
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  SmallVector<int64_t, 4> shape;
  std::string err;
  if (op == "Reshape") {
    const ConstTensor *s = constInput(n, 1);
    if (!s)
      return nodeError(n)
             << "the target shape could not be folded to a constant";
    if (!resolveReshape(xt.getShape(), s->toInts(),
                        a.getInt("allowzero").value_or(0), shape, err))
      return nodeError(n) << err;
  } else if (op == "Flatten") {
    int64_t axis = a.getInt("axis").value_or(1);
    if (axis < 0)
      axis += rank;
    if (axis < 0 || axis > rank)
      return nodeError(n) << "axis is out of range for rank " << rank;
    // The outer and inner sizes; with a 0 dim the others can be anything.
    int64_t p = 1, q = 1;
    for (int64_t k = 0; k < rank; ++k)
      if (__builtin_mul_overflow(k < axis ? p : q, xt.getDimSize(k),
                                 k < axis ? &p : &q))
        return nodeError(n) << "the flattened shape overflows int64";
    if (axis == 1 && rank >= 2) {
      Value in = contiguousFor(*x, {xt.getDimSize(0), q}, loc);
      auto r = make<nn::FlattenOp>(loc, in, b.getI64IntegerAttr(1),
                                   b.getI64IntegerAttr(-1));
      if (failed(r))
        return failure();
      setTensor(n, 0, *r);
      return success();
    }
    shape = {p, q};
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    ConstTensor probe = ConstTensor::make(DT_INT64, {});
    probe.shape.assign(xt.getShape().begin(), xt.getShape().end());
    SmallVector<const ConstTensor *> ins{&probe, constInput(n, 1)};
    if (hasInput(n, 1) && !ins[1])
      return nodeError(n) << "axes must be constant";
    // Fold on a shape-only probe (no elements) to get the result shape.
    probe.i.clear();
    std::vector<ConstTensor> outs;
    if (!foldOp(op, ins, a, 1, outs, err))
      return nodeError(n) << err;
    shape = outs[0].shape;
  } else if (op == "Expand") {
    const ConstTensor *s = constInput(n, 1);
    if (!s)
      return nodeError(n)
             << "the target shape could not be folded to a constant";
    auto bs = broadcastShapes(xt.getShape(), s->toInts());
    if (!bs)
      return nodeError(n) << "shape does not broadcast with " << xt;
    if (ArrayRef<int64_t>(*bs) == xt.getShape()) {
      setTensor(n, 0, *x);
      return success();
    }
    auto out = RankedTensorType::get(*bs, xt.getElementType());
    if (!checkedNumElements(*bs))
      return nodeError(n) << "the expanded shape overflows int64";
    setTensor(n, 0, nn::ExpandOp::create(b, loc, out, *x));
    return success();
  }
  auto r = reshapeTo(*x, shape, loc);
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitSlice(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  if (hasInput(n, 1))
    for (int k = 1; k <= 4; ++k)
      if (hasInput(n, k) && !constInput(n, k))
        return nodeError(n) << "starts, ends, axes and steps must be constants";
  SliceSpec spec;
  std::string err;
  if (!readSliceSpec(constInput(n, 1), constInput(n, 2), constInput(n, 3),
                     constInput(n, 4), hasInput(n, 1), a, spec, err))
    return nodeError(n) << err;
  auto &[starts, ends, axes, steps] = spec;
  Value v = *x;
  for (size_t k = 0; k < starts.size(); ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank)
      return nodeError(n) << "axis " << axes[k] << " is out of range for rank "
                          << rank;
    if (steps[k] <= 0)
      return nodeError(n) << "only positive slice steps are supported";
    int64_t dim = xt.getDimSize(axis);
    int64_t s = starts[k], e = ends[k];
    if (s < 0)
      s += dim;
    if (e < 0)
      e += dim;
    s = std::clamp<int64_t>(s, 0, dim);
    e = std::clamp<int64_t>(e, 0, dim);
    if (s == 0 && e == dim && steps[k] == 1)
      continue;
    auto r = make<nn::SliceOp>(loc, v, b.getI64IntegerAttr(axis),
                               b.getI64IntegerAttr(s), b.getI64IntegerAttr(e),
                               b.getI64IntegerAttr(steps[k]));
    if (failed(r))
      return failure();
    v = *r;
  }
  setTensor(n, 0, v);
  return success();
}

LogicalResult Importer::emitSplit(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  int64_t axis = a.getInt("axis").value_or(0);
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return nodeError(n) << "axis is out of range for rank " << rank;
  int64_t dim = xt.getDimSize(axis);
  std::vector<int64_t> sizes;
  if (hasInput(n, 1)) {
    const ConstTensor *c = constInput(n, 1);
    if (!c)
      return nodeError(n) << "split sizes must be constant";
    sizes = c->toInts();
  } else if (auto s = a.getInts("split"); s && !s->empty()) {
    sizes = *s;
  } else {
    int64_t parts = a.getInt("num_outputs").value_or(n.output_size());
    if (parts <= 0 || parts != n.output_size())
      return nodeError(n) << "num_outputs " << parts << " for "
                          << n.output_size() << " outputs";
    int64_t chunk = dim / parts + (dim % parts != 0);
    for (int64_t k = 0; k < parts; ++k)
      sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - k * chunk)));
  }
  if ((int)sizes.size() != n.output_size())
    return nodeError(n) << sizes.size() << " split sizes for "
                        << n.output_size() << " outputs";
  int64_t start = 0;
  for (size_t k = 0; k < sizes.size(); ++k) {
    if (sizes[k] < 0 || start > dim - sizes[k])
      return nodeError(n) << "split sizes exceed dimension " << axis
                          << " of size " << dim;
    auto r = make<nn::SliceOp>(
        loc, *x, b.getI64IntegerAttr(axis), b.getI64IntegerAttr(start),
        b.getI64IntegerAttr(start + sizes[k]), b.getI64IntegerAttr(1));
    if (failed(r))
      return failure();
    start += sizes[k];
    if (!n.output(k).empty())
      setTensor(n, k, *r);
  }
  return success();
}

LogicalResult Importer::emitWhere(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  // Where(mask, fill, x) / Where(mask, x, fill) with a constant mask and a
  // constant scalar fill is x.masked_fill(mask, fill) (or ~mask).
  const ConstTensor *cond = constInput(n, 0);
  const ConstTensor *c1 = constInput(n, 1), *c2 = constInput(n, 2);
  if (!cond || (c1 && c2) || (!c1 && !c2))
    return nodeError(n) << "only Where with a constant condition and one "
                           "constant branch (masked_fill) is supported";
  int xi = c1 ? 2 : 1;
  const ConstTensor *fill = c1 ? c1 : c2;
  if (fill->numElements() != 1)
    return nodeError(n)
           << "only Where with a scalar fill (masked_fill) is supported";
  auto x = tensor(n, xi);
  if (failed(x))
    return failure();
  if (!isFloatTensor(*x))
    return nodeError(n) << "expects a floating-point tensor";
  // The fill goes where the condition holds when it is the first branch, and
  // where it does not when it is the second.
  ConstTensor mask = ConstTensor::make(DT_BOOL, cond->shape);
  for (int64_t k = 0, e = cond->numElements(); k < e; ++k)
    mask.i[k] = (cond->getI(k) != 0) == (c1 != nullptr);
  Value maskValue = materialize(mask, b.getI1Type(), loc);
  auto r =
      make<nn::MaskedFillOp>(loc, *x, maskValue, llvm::APFloat(fill->getF(0)),
                             /*inplace=*/false);
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitReduceMean(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  if (!isFloatTensor(*x))
    return nodeError(n) << "expects a floating-point tensor";
  int64_t rank = cast<RankedTensorType>(x->getType()).getRank();
  std::vector<int64_t> axes;
  if (hasInput(n, 1)) { // opset 18
    const ConstTensor *c = constInput(n, 1);
    if (!c)
      return nodeError(n) << "axes must be constant";
    axes = c->toInts();
  } else {
    axes = a.getInts("axes").value_or(std::vector<int64_t>{});
  }
  if (axes.empty()) {
    if (a.getInt("noop_with_empty_axes").value_or(0)) {
      setTensor(n, 0, *x);
      return success();
    }
    for (int64_t k = 0; k < rank; ++k)
      axes.push_back(k);
  }
  for (int64_t &ax : axes) {
    if (ax < -rank || ax >= rank)
      return nodeError(n) << "axis " << ax << " is out of range for rank "
                          << rank;
    if (ax < 0)
      ax += rank;
  }
  llvm::sort(axes);
  bool keep = a.getInt("keepdims").value_or(1);
  auto r = make<nn::MeanOp>(loc, *x, b.getDenseI64ArrayAttr(axes),
                            keep ? b.getUnitAttr() : UnitAttr());
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

LogicalResult Importer::emitPad(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  NodeAttrs a(n);
  std::string mode = a.getString("mode").value_or("constant");
  auto x = tensor(n, 0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  int64_t rank = xt.getRank();
  std::vector<int64_t> pads;
  if (hasInput(n, 1)) {
    const ConstTensor *c = constInput(n, 1);
    if (!c)
      return nodeError(n) << "pads must be constant";
    pads = c->toInts();
  } else {
    pads = a.getInts("pads").value_or(std::vector<int64_t>{});
  }
  std::vector<int64_t> axes;
  if (hasInput(n, 3)) { // opset 18
    const ConstTensor *c = constInput(n, 3);
    if (!c)
      return nodeError(n) << "axes must be constant";
    axes = c->toInts();
  } else {
    for (int64_t k = 0; k < rank; ++k)
      axes.push_back(k);
  }
  if (pads.size() != 2 * axes.size())
    return nodeError(n) << "expects " << 2 * axes.size() << " pads, got "
                        << pads.size();
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t ax = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (ax < 0 || ax >= rank)
      return nodeError(n) << "axis " << axes[k] << " is out of range for rank "
                          << rank;
    low[ax] = pads[k];
    high[ax] = pads[k + axes.size()];
  }
  // torch.onnx pads average pooling's input with zeros (densenet): nothing
  // to do.
  if (llvm::all_of(low, [](int64_t v) { return v == 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v == 0; })) {
    setTensor(n, 0, *x);
    return success();
  }
  if (mode != "constant")
    return nodeError(n) << "only constant padding is supported, got mode '"
                        << mode << "'";
  if (llvm::any_of(low, [](int64_t v) { return v < 0; }) ||
      llvm::any_of(high, [](int64_t v) { return v < 0; }))
    return nodeError(n) << "negative pads (cropping) are not supported";
  double value = 0;
  if (hasInput(n, 2)) {
    const ConstTensor *c = constInput(n, 2);
    if (!c || c->numElements() != 1)
      return nodeError(n) << "the pad value must be a constant scalar";
    value = c->getF(0);
  }
  if (!isFloatTensor(*x))
    return nodeError(n) << "expects a floating-point tensor";
  auto r =
      make<nn::PadOp>(loc, *x, b.getDenseI64ArrayAttr(low),
                      b.getDenseI64ArrayAttr(high), b.getF64FloatAttr(value));
  if (failed(r))
    return failure();
  setTensor(n, 0, *r);
  return success();
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Importer::run(StringRef bytes) {
  ctx->getOrLoadDialect<nn::NNDialect>();
  ctx->getOrLoadDialect<func::FuncDialect>();

  onnx::ModelProto model;
  if (bytes.size() > (size_t)INT_MAX ||
      !model.ParseFromArray(bytes.data(), (int)bytes.size())) {
    emitError(fileLoc) << "cannot parse '" << filename
                       << "' as an ONNX model (truncated or corrupt protobuf)";
    return nullptr;
  }
  if (!model.has_graph()) {
    emitError(fileLoc) << "'" << filename
                       << "' has no graph (not an ONNX model?)";
    return nullptr;
  }
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  graph = &model.graph();

  for (const auto &p : opts.bufferPatterns) {
    auto g = llvm::GlobPattern::create(p);
    if (!g) {
      llvm::consumeError(g.takeError());
      emitError(fileLoc) << "invalid buffer name pattern '" << p << "'";
      return nullptr;
    }
    bufferGlobs.push_back(std::move(*g));
  }
  for (const auto &n : graph->node())
    if (n.op_type() == "BatchNormalization")
      for (int k = 3; k < 5 && k < n.input_size(); ++k)
        bnStats.insert(n.input(k));
  for (const auto &o : graph->output())
    graphOutputs.insert(o.name());

  if (failed(collectInitializers()))
    return nullptr;
  SmallVector<const onnx::NodeProto *> order;
  if (failed(sortNodes(order)))
    return nullptr;

  // Function arguments.
  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  SmallVector<std::string> argNames;
  for (const auto &vi : graph->input()) {
    if (inits.count(vi.name()))
      continue;
    auto t = inputType(vi);
    if (failed(t))
      return nullptr;
    argTypes.push_back(*t);
    argLocs.push_back(NameLoc::get(StringAttr::get(ctx, vi.name()), fileLoc));
    argNames.push_back(vi.name());
  }
  if (graph->output_size() == 0) {
    emitError(fileLoc) << "the graph has no outputs";
    return nullptr;
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, fileLoc, "forward",
                                   FunctionType::get(ctx, argTypes, {}));
  Block *body = func.addEntryBlock();
  for (unsigned k = 0; k < argTypes.size(); ++k) {
    body->getArgument(k).setLoc(argLocs[k]);
    Entry e;
    e.kind = Entry::Tensor;
    e.value = body->getArgument(k);
    env[argNames[k]] = e;
  }
  b.setInsertionPointToEnd(body);

  findFusions();
  for (const onnx::NodeProto *n : order)
    if (failed(emitNode(*n)))
      return nullptr;

  SmallVector<Value> results;
  for (const auto &o : graph->output()) {
    auto v = tensorOf(o.name(),
                      NameLoc::get(StringAttr::get(ctx, o.name()), fileLoc));
    if (failed(v))
      return nullptr;
    results.push_back(*v);
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(
      FunctionType::get(ctx, argTypes, TypeRange(ValueRange(results))));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

OwningOpRef<ModuleOp>
vram::onnx_import::importOnnxModel(MLIRContext *context, StringRef bytes,
                                   StringRef filename,
                                   const OnnxImportOptions &options) {
  Importer importer(context, filename, options);
  return importer.run(bytes);
}
