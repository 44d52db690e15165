//===- Builtins.cpp - LibTorch layers and functions as nn IR --------------===//
//
// The tables of the C++ front end: built-in layers (torch::nn::Conv2d, ...)
// with the tensors their options declare and the op one call creates, torch
// functions (torch::relu, torch::flatten, ...) and Tensor methods
// (x.view(...), x.size(1), `+`). One entry per layer or function; what is
// not in a table is a located warning (functions) or error (layers).
//
// Shapes are checked here before ops are created, so that a mismatch is the
// error LibTorch would raise at run time, at the C++ call.
//
//===----------------------------------------------------------------------===//

#include "Interpreter.h"

#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

using namespace mlir;
using namespace vram::cxx_import;
namespace nn = vram::nn;

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getShape();
}

static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

namespace {
/// Reads options of a layer with LibTorch's defaults.
struct OptionReader {
  Interpreter &interp;
  Module &m;
  Location where;

  FailureOr<int64_t> integer(StringRef name, int index,
                             std::optional<int64_t> def = std::nullopt) {
    const Val *v = m.options.get(name, index);
    if (!v && def)
      return *def;
    if (!v)
      return interp.error(where) << "torch::nn::" << m.kind << ": option '"
                                 << name << "' is not given";
    if (std::optional<int64_t> i = v->getInt())
      return *i;
    return interp.error(where)
           << "torch::nn::" << m.kind << ": option '" << name << "' is "
           << v->describe() << ", not a constant integer";
  }
  FailureOr<double> real(StringRef name, int index, double def) {
    const Val *v = m.options.get(name, index);
    if (!v || v->kind == Val::Kind::None)
      return def;
    if (std::optional<double> r = v->getReal())
      return *r;
    return interp.error(where)
           << "torch::nn::" << m.kind << ": option '" << name << "' is "
           << v->describe() << ", not a constant number";
  }
  FailureOr<bool> flag(StringRef name, int index, bool def) {
    FailureOr<int64_t> v = integer(name, index, def);
    if (failed(v))
      return failure();
    return *v != 0;
  }
  /// An ExpandingArray<2> option: `3` or `{3, 2}`.
  FailureOr<SmallVector<int64_t>>
  pair(StringRef name, int index,
       std::optional<SmallVector<int64_t>> def = std::nullopt) {
    const Val *v = m.options.get(name, index);
    if ((!v || v->kind == Val::Kind::None) && def)
      return *def;
    if (!v)
      return interp.error(where) << "torch::nn::" << m.kind << ": option '"
                                 << name << "' is not given";
    if (std::optional<SmallVector<int64_t>> ints = v->getInts(2))
      return *ints;
    return interp.error(where) << "torch::nn::" << m.kind << ": option '"
                               << name << "' is " << v->describe()
                               << ", not a constant integer or pair "
                                  "(padding modes such as torch::kSame are "
                                  "not modelled)";
  }
};

/// Options of Conv2d.
struct ConvConfig {
  int64_t in, out, groups;
  SmallVector<int64_t> kernel, stride, padding, dilation;
  bool bias;
};
} // namespace

static FailureOr<ConvConfig> readConv(Interpreter &interp, Module &m,
                                      Location where) {
  OptionReader r{interp, m, where};
  ConvConfig c;
  FailureOr<int64_t> in = r.integer("in_channels", 0);
  FailureOr<int64_t> out = r.integer("out_channels", 1);
  FailureOr<SmallVector<int64_t>> kernel = r.pair("kernel_size", 2);
  FailureOr<SmallVector<int64_t>> stride =
      r.pair("stride", -1, SmallVector<int64_t>{1, 1});
  FailureOr<SmallVector<int64_t>> padding =
      r.pair("padding", -1, SmallVector<int64_t>{0, 0});
  FailureOr<SmallVector<int64_t>> dilation =
      r.pair("dilation", -1, SmallVector<int64_t>{1, 1});
  FailureOr<int64_t> groups = r.integer("groups", -1, 1);
  FailureOr<bool> bias = r.flag("bias", -1, true);
  if (failed(in) || failed(out) || failed(kernel) || failed(stride) ||
      failed(padding) || failed(dilation) || failed(groups) || failed(bias))
    return failure();
  c.in = *in;
  c.out = *out;
  c.kernel = *kernel;
  c.stride = *stride;
  c.padding = *padding;
  c.dilation = *dilation;
  c.groups = *groups;
  c.bias = *bias;
  if (c.in <= 0 || c.out <= 0 || c.groups <= 0 || c.in % c.groups ||
      c.out % c.groups)
    return interp.error(where)
           << "torch::nn::Conv2d: channels " << c.in << " -> " << c.out
           << " are not positive multiples of groups " << c.groups;
  return c;
}

/// The output size of a window of `kernel` over `size` (conv and pooling).
static int64_t windowOutput(int64_t size, int64_t kernel, int64_t stride,
                            int64_t pad, int64_t dilation, bool ceil) {
  int64_t span = size + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t out = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
  // PyTorch: the last window must start inside the (left-padded) input.
  if (ceil && (out - 1) * stride >= size + pad)
    --out;
  return out;
}

static LogicalResult checkImage(Interpreter &interp, Location where,
                                StringRef what, Value x, int64_t channels) {
  ArrayRef<int64_t> s = shapeOf(x);
  if (s.size() != 4)
    return interp.error(where) << what << " expects a 4-D [N, C, H, W] input, "
                               << "got " << shapeString(s);
  if (channels > 0 && s[1] != channels)
    return interp.error(where) << what << " expects " << channels
                               << " input channels, got " << shapeString(s);
  return success();
}

static LogicalResult
checkWindow(Interpreter &interp, Location where, StringRef what, Value x,
            ArrayRef<int64_t> kernel, ArrayRef<int64_t> stride,
            ArrayRef<int64_t> pad, ArrayRef<int64_t> dilation, bool ceil) {
  ArrayRef<int64_t> s = shapeOf(x);
  for (int k = 0; k < 2; ++k)
    if (stride[k] <= 0 || kernel[k] <= 0 ||
        windowOutput(s[2 + k], kernel[k], stride[k], pad[k], dilation[k],
                     ceil) <= 0)
      return interp.error(where)
             << what << ": input " << shapeString(s)
             << " is too small for kernel " << shapeString(kernel);
  return success();
}

static FailureOr<Value> pool(Interpreter &interp, Location where, bool isMax,
                             Value x, SmallVector<int64_t> kernel,
                             SmallVector<int64_t> stride,
                             SmallVector<int64_t> pad,
                             SmallVector<int64_t> dilation, bool ceil,
                             bool countIncludePad) {
  StringRef what = isMax ? "max_pool2d" : "avg_pool2d";
  if (stride.empty())
    stride = kernel;
  if (failed(checkImage(interp, where, what, x, -1)) ||
      failed(checkWindow(interp, where, what, x, kernel, stride, pad, dilation,
                         ceil)))
    return failure();
  OpBuilder &b = interp.getBuilder();
  if (isMax)
    return Value(nn::MaxPool2dOp::create(b, where, x, kernel,
                                         b.getDenseI64ArrayAttr(stride), pad,
                                         dilation, ceil));
  if (dilation != SmallVector<int64_t>{1, 1})
    return interp.error(where) << "avg_pool2d has no dilation";
  return Value(nn::AvgPool2dOp::create(b, where, x, kernel,
                                       b.getDenseI64ArrayAttr(stride), pad,
                                       ceil, countIncludePad));
}

static FailureOr<Value> adaptivePool(Interpreter &interp, Location where,
                                     Value x, const Val &size) {
  if (failed(checkImage(interp, where, "adaptive_avg_pool2d", x, -1)))
    return failure();
  std::optional<SmallVector<int64_t>> out = size.getInts(2);
  if (!out || (*out)[0] <= 0 || (*out)[1] <= 0)
    return interp.error(where)
           << "adaptive_avg_pool2d: the output size is " << size.describe()
           << ", not a constant positive pair";
  return Value(
      nn::AdaptiveAvgPool2dOp::create(interp.getBuilder(), where, x, *out));
}

static Value tensorOf(Interpreter &interp, Module &m, StringRef leaf) {
  TensorDecl *t = m.findTensor(leaf);
  return t ? interp.materialize(m, *t) : Value();
}

static void declare(Module &m, StringRef name, ArrayRef<int64_t> shape,
                    bool isBuffer = false, bool isInt64 = false) {
  TensorDecl t;
  t.name = name.str();
  t.shape.assign(shape.begin(), shape.end());
  t.isBuffer = isBuffer;
  t.isInt64 = isInt64;
  m.tensors.push_back(std::move(t));
}

static LayerInfo noTensors(std::function<FailureOr<Val>(Interpreter &, Module &,
                                                        const Val &, Location)>
                               call) {
  return {[](Interpreter &, Module &, clang::SourceLocation) -> LogicalResult {
            return success();
          },
          std::move(call)};
}

static FailureOr<Val> wrap(FailureOr<Value> v) {
  if (failed(v))
    return failure();
  return Val::ofTensor(*v);
}

const llvm::StringMap<LayerInfo> &vram::cxx_import::getLayerTable() {
  static const llvm::StringMap<LayerInfo> table = [] {
    llvm::StringMap<LayerInfo> t;
    t["Conv2d"] = {
        [](Interpreter &interp, Module &m,
           clang::SourceLocation where) -> LogicalResult {
          FailureOr<ConvConfig> c = readConv(interp, m, interp.loc(where));
          if (failed(c))
            return failure();
          declare(m, "weight",
                  {c->out, c->in / c->groups, c->kernel[0], c->kernel[1]});
          if (c->bias)
            declare(m, "bias", {c->out});
          return success();
        },
        [](Interpreter &interp, Module &m, const Val &input,
           Location where) -> FailureOr<Val> {
          FailureOr<ConvConfig> c = readConv(interp, m, where);
          if (failed(c))
            return failure();
          Value x = input.tensor;
          if (failed(
                  checkImage(interp, where, "torch::nn::Conv2d", x, c->in)) ||
              failed(checkWindow(interp, where, "torch::nn::Conv2d", x,
                                 c->kernel, c->stride, c->padding, c->dilation,
                                 false)))
            return failure();
          return Val::ofTensor(nn::Conv2dOp::create(
              interp.getBuilder(), where, x, tensorOf(interp, m, "weight"),
              tensorOf(interp, m, "bias"), c->stride, c->padding, c->dilation,
              c->groups));
        }};
    t["Linear"] = {
        [](Interpreter &interp, Module &m,
           clang::SourceLocation where) -> LogicalResult {
          OptionReader r{interp, m, interp.loc(where)};
          FailureOr<int64_t> in = r.integer("in_features", 0);
          FailureOr<int64_t> out = r.integer("out_features", 1);
          FailureOr<bool> bias = r.flag("bias", -1, true);
          if (failed(in) || failed(out) || failed(bias))
            return failure();
          if (*in <= 0 || *out <= 0)
            return interp.error(interp.loc(where))
                   << "torch::nn::Linear: features " << *in << " -> " << *out
                   << " must be positive";
          declare(m, "weight", {*out, *in});
          if (*bias)
            declare(m, "bias", {*out});
          return success();
        },
        [](Interpreter &interp, Module &m, const Val &input,
           Location where) -> FailureOr<Val> {
          Value w = tensorOf(interp, m, "weight");
          Value x = input.tensor;
          int64_t in = shapeOf(w)[1];
          if (shapeOf(x).empty() || shapeOf(x).back() != in)
            return interp.error(where)
                   << "torch::nn::Linear expects " << in
                   << " input features, got " << shapeString(shapeOf(x));
          return Val::ofTensor(nn::LinearOp::create(
              interp.getBuilder(), where, x, w, tensorOf(interp, m, "bias")));
        }};
    t["BatchNorm2d"] = {
        [](Interpreter &interp, Module &m,
           clang::SourceLocation where) -> LogicalResult {
          OptionReader r{interp, m, interp.loc(where)};
          FailureOr<int64_t> c = r.integer("num_features", 0);
          FailureOr<bool> affine = r.flag("affine", -1, true);
          FailureOr<bool> track = r.flag("track_running_stats", -1, true);
          if (failed(c) || failed(affine) || failed(track))
            return failure();
          if (*affine) {
            declare(m, "weight", {*c});
            declare(m, "bias", {*c});
          }
          if (*track) {
            declare(m, "running_mean", {*c}, /*isBuffer=*/true);
            declare(m, "running_var", {*c}, /*isBuffer=*/true);
            declare(m, "num_batches_tracked", {}, /*isBuffer=*/true,
                    /*isInt64=*/true);
          }
          return success();
        },
        [](Interpreter &interp, Module &m, const Val &input,
           Location where) -> FailureOr<Val> {
          OptionReader r{interp, m, where};
          FailureOr<int64_t> c = r.integer("num_features", 0);
          FailureOr<double> eps = r.real("eps", -1, 1e-5);
          FailureOr<double> momentum = r.real("momentum", -1, 0.1);
          if (failed(c) || failed(eps) || failed(momentum) ||
              failed(checkImage(interp, where, "torch::nn::BatchNorm2d",
                                input.tensor, *c)))
            return failure();
          Value mean = tensorOf(interp, m, "running_mean");
          Value var = tensorOf(interp, m, "running_var");
          if (mean)
            tensorOf(interp, m, "num_batches_tracked");
          return Val::ofTensor(nn::BatchNormOp::create(
              interp.getBuilder(), where, input.tensor,
              tensorOf(interp, m, "weight"), tensorOf(interp, m, "bias"), mean,
              var, llvm::APFloat(*eps), llvm::APFloat(*momentum)));
        }};
    t["LayerNorm"] = {
        [](Interpreter &interp, Module &m,
           clang::SourceLocation where) -> LogicalResult {
          OptionReader r{interp, m, interp.loc(where)};
          const Val *shape = m.options.get("normalized_shape", 0);
          std::optional<SmallVector<int64_t>> dims =
              shape ? shape->getInts() : std::nullopt;
          FailureOr<bool> affine = r.flag("elementwise_affine", -1, true);
          if (!dims || failed(affine))
            return interp.error(interp.loc(where))
                   << "torch::nn::LayerNorm: normalized_shape is not a "
                      "constant list";
          if (*affine) {
            declare(m, "weight", *dims);
            declare(m, "bias", *dims);
          }
          return success();
        },
        [](Interpreter &interp, Module &m, const Val &input,
           Location where) -> FailureOr<Val> {
          OptionReader r{interp, m, where};
          FailureOr<double> eps = r.real("eps", -1, 1e-5);
          if (failed(eps))
            return failure();
          SmallVector<int64_t> dims =
              *m.options.get("normalized_shape", 0)->getInts();
          ArrayRef<int64_t> s = shapeOf(input.tensor);
          if (s.size() < dims.size() ||
              s.take_back(dims.size()) != ArrayRef<int64_t>(dims))
            return interp.error(where)
                   << "torch::nn::LayerNorm over " << shapeString(dims)
                   << " does not fit input " << shapeString(s);
          return Val::ofTensor(nn::LayerNormOp::create(
              interp.getBuilder(), where, input.tensor,
              tensorOf(interp, m, "weight"), tensorOf(interp, m, "bias"),
              dims.size(), llvm::APFloat(*eps)));
        }};
    t["ReLU"] = noTensors([](Interpreter &interp, Module &m, const Val &input,
                             Location where) -> FailureOr<Val> {
      FailureOr<bool> inplace =
          OptionReader{interp, m, where}.flag("inplace", 0, false);
      if (failed(inplace))
        return failure();
      return Val::ofTensor(nn::ReluOp::create(interp.getBuilder(), where,
                                              input.tensor, *inplace));
    });
    t["Dropout"] =
        noTensors([](Interpreter &interp, Module &m, const Val &input,
                     Location where) -> FailureOr<Val> {
          OptionReader r{interp, m, where};
          FailureOr<double> p = r.real("p", 0, 0.5);
          FailureOr<bool> inplace = r.flag("inplace", -1, false);
          if (failed(p) || failed(inplace))
            return failure();
          // Identity in eval mode and for p = 0, as in LibTorch.
          if (!interp.isTraining() || *p == 0)
            return input;
          return Val::ofTensor(
              nn::DropoutOp::create(interp.getBuilder(), where, input.tensor,
                                    llvm::APFloat(*p), *inplace));
        });
    t["MaxPool2d"] = noTensors([](Interpreter &interp, Module &m,
                                  const Val &input,
                                  Location where) -> FailureOr<Val> {
      OptionReader r{interp, m, where};
      FailureOr<SmallVector<int64_t>> kernel = r.pair("kernel_size", 0);
      if (failed(kernel))
        return failure();
      FailureOr<SmallVector<int64_t>> stride = r.pair("stride", -1, *kernel);
      FailureOr<SmallVector<int64_t>> pad =
          r.pair("padding", -1, SmallVector<int64_t>{0, 0});
      FailureOr<SmallVector<int64_t>> dilation =
          r.pair("dilation", -1, SmallVector<int64_t>{1, 1});
      FailureOr<bool> ceil = r.flag("ceil_mode", -1, false);
      if (failed(stride) || failed(pad) || failed(dilation) || failed(ceil))
        return failure();
      return wrap(pool(interp, where, true, input.tensor, *kernel, *stride,
                       *pad, *dilation, *ceil, true));
    });
    t["AvgPool2d"] = noTensors([](Interpreter &interp, Module &m,
                                  const Val &input,
                                  Location where) -> FailureOr<Val> {
      OptionReader r{interp, m, where};
      FailureOr<SmallVector<int64_t>> kernel = r.pair("kernel_size", 0);
      if (failed(kernel))
        return failure();
      FailureOr<SmallVector<int64_t>> stride = r.pair("stride", -1, *kernel);
      FailureOr<SmallVector<int64_t>> pad =
          r.pair("padding", -1, SmallVector<int64_t>{0, 0});
      FailureOr<bool> ceil = r.flag("ceil_mode", -1, false);
      FailureOr<bool> countPad = r.flag("count_include_pad", -1, true);
      if (failed(stride) || failed(pad) || failed(ceil) || failed(countPad))
        return failure();
      return wrap(pool(interp, where, false, input.tensor, *kernel, *stride,
                       *pad, {1, 1}, *ceil, *countPad));
    });
    t["AdaptiveAvgPool2d"] =
        noTensors([](Interpreter &interp, Module &m, const Val &input,
                     Location where) -> FailureOr<Val> {
          const Val *size = m.options.get("output_size", 0);
          if (!size)
            return interp.error(where)
                   << "torch::nn::AdaptiveAvgPool2d needs an output size";
          return wrap(adaptivePool(interp, where, input.tensor, *size));
        });
    t["Flatten"] =
        noTensors([](Interpreter &interp, Module &m, const Val &input,
                     Location where) -> FailureOr<Val> {
          OptionReader r{interp, m, where};
          FailureOr<int64_t> start = r.integer("start_dim", -1, 1);
          FailureOr<int64_t> end = r.integer("end_dim", -1, -1);
          if (failed(start) || failed(end))
            return failure();
          return Val::ofTensor(nn::FlattenOp::create(
              interp.getBuilder(), where, input.tensor, *start, *end));
        });
    t["Identity"] = noTensors([](Interpreter &, Module &, const Val &input,
                                 Location) -> FailureOr<Val> { return input; });
    t["Sigmoid"] = noTensors([](Interpreter &interp, Module &, const Val &input,
                                Location where) -> FailureOr<Val> {
      return Val::ofTensor(
          nn::SigmoidOp::create(interp.getBuilder(), where, input.tensor));
    });
    t["Tanh"] = noTensors([](Interpreter &interp, Module &, const Val &input,
                             Location where) -> FailureOr<Val> {
      return Val::ofTensor(
          nn::TanhOp::create(interp.getBuilder(), where, input.tensor));
    });
    t["GELU"] = noTensors([](Interpreter &interp, Module &, const Val &input,
                             Location where) -> FailureOr<Val> {
      return Val::ofTensor(nn::GeluOp::create(interp.getBuilder(), where,
                                              input.tensor,
                                              nn::GeluApproximation::None));
    });
    return t;
  }();
  return table;
}

//===----------------------------------------------------------------------===//
// Functions and Tensor methods
//===----------------------------------------------------------------------===//

/// Argument `index` as an integer, `def` when absent.
static FailureOr<int64_t> intArg(Interpreter &interp, CallInfo &call,
                                 unsigned index,
                                 std::optional<int64_t> def = std::nullopt) {
  if (index >= call.args.size() || call.args[index].kind == Val::Kind::None) {
    if (def)
      return *def;
    return interp.error(call.loc)
           << "'" << call.name << "' needs argument " << index;
  }
  if (std::optional<int64_t> v = call.args[index].getInt())
    return *v;
  return interp.error(call.loc)
         << "argument " << index << " of '" << call.name << "' is "
         << call.args[index].describe() << ", not a constant integer";
}

/// Argument `index` as an integer pair (IntArrayRef of 1 or 2 values);
/// `def` when absent or empty.
static FailureOr<SmallVector<int64_t>> pairArg(Interpreter &interp,
                                               CallInfo &call, unsigned index,
                                               SmallVector<int64_t> def) {
  if (index >= call.args.size() || call.args[index].kind == Val::Kind::None)
    return def;
  const Val &v = call.args[index];
  if (v.kind == Val::Kind::List && v.list.empty())
    return def;
  if (v.kind == Val::Kind::List && v.list.size() == 1)
    if (std::optional<int64_t> i = v.list[0].getInt())
      return SmallVector<int64_t>{*i, *i};
  if (std::optional<SmallVector<int64_t>> ints = v.getInts(2))
    return *ints;
  return interp.error(call.loc)
         << "argument " << index << " of '" << call.name << "' is "
         << v.describe() << ", not a constant pair";
}

static int64_t normalizeDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

static bool broadcastable(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  for (size_t k = 1; k <= std::min(a.size(), b.size()); ++k) {
    int64_t x = a[a.size() - k], y = b[b.size() - k];
    if (x != y && x != 1 && y != 1)
      return false;
  }
  return true;
}

/// `lhs op rhs` where either may be a number (a 0-d constant).
template <typename OpTy>
static FailureOr<Val> binary(Interpreter &interp, CallInfo &call,
                             bool inplace) {
  OpBuilder &b = interp.getBuilder();
  SmallVector<Value, 2> operands;
  for (unsigned k = 0; k < 2 && k < call.args.size(); ++k) {
    Val &v = call.args[k];
    if (std::optional<double> r = v.getReal()) {
      auto type = RankedTensorType::get({}, b.getF32Type());
      operands.push_back(nn::ConstantOp::create(
          b, call.loc, DenseElementsAttr::get(type, float(*r))));
      continue;
    }
    FailureOr<Value> t = interp.tensorArg(call, k);
    if (failed(t))
      return failure();
    operands.push_back(*t);
  }
  if (operands.size() != 2)
    return interp.error(call.loc) << "'" << call.name << "' needs two operands";
  ArrayRef<int64_t> a = shapeOf(operands[0]), c = shapeOf(operands[1]);
  if (!broadcastable(a, c))
    return interp.error(call.loc)
           << "'" << call.name << "': shapes " << shapeString(a) << " and "
           << shapeString(c) << " do not broadcast";
  return Val::ofTensor(
      OpTy::create(b, call.loc, operands[0], operands[1], inplace));
}

static FailureOr<Val> reshape(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  if (failed(x))
    return failure();
  SmallVector<Val> dims;
  if (call.args.size() == 2 && call.args[1].kind == Val::Kind::List)
    dims.assign(call.args[1].list.begin(), call.args[1].list.end());
  else
    dims.assign(call.args.begin() + 1, call.args.end());
  int64_t total = 1;
  for (int64_t d : shapeOf(*x))
    total *= d;
  SmallVector<int64_t> shape;
  int inferred = -1;
  int64_t known = 1;
  for (auto [k, d] : llvm::enumerate(dims)) {
    std::optional<int64_t> v = d.getInt();
    if (!v)
      return interp.error(call.loc)
             << "'" << call.name << "': dimension " << k << " is "
             << d.describe() << ", not a constant";
    if (*v == -1 && inferred < 0) {
      inferred = k;
      shape.push_back(1);
      continue;
    }
    if (*v <= 0)
      return interp.error(call.loc)
             << "'" << call.name << "': invalid size " << *v;
    shape.push_back(*v);
    known *= *v;
  }
  if (inferred >= 0) {
    if (known == 0 || total % known)
      return interp.error(call.loc)
             << "'" << call.name << "': " << shapeString(shapeOf(*x))
             << " cannot be viewed with a -1 dimension here";
    shape[inferred] = total / known;
  } else if (known != total) {
    return interp.error(call.loc)
           << "'" << call.name << "': shape " << shapeString(shape)
           << " is invalid for an input of " << shapeString(shapeOf(*x));
  }
  auto type = RankedTensorType::get(
      shape, cast<RankedTensorType>(x->getType()).getElementType());
  return Val::ofTensor(
      nn::ReshapeOp::create(interp.getBuilder(), call.loc, type, *x));
}

static FailureOr<Val> flatten(Interpreter &interp, CallInfo &call,
                              int64_t defaultStart) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  FailureOr<int64_t> start = intArg(interp, call, 1, defaultStart);
  FailureOr<int64_t> end = intArg(interp, call, 2, -1);
  if (failed(x) || failed(start) || failed(end))
    return failure();
  int64_t rank = shapeOf(*x).size();
  int64_t s = normalizeDim(*start, rank), e = normalizeDim(*end, rank);
  if (s < 0 || e >= rank || s > e)
    return interp.error(call.loc)
           << "'" << call.name << "': dimensions " << *start << ".." << *end
           << " are out of range for rank " << rank;
  return Val::ofTensor(
      nn::FlattenOp::create(interp.getBuilder(), call.loc, *x, *start, *end));
}

template <typename OpTy> static FunctionConverter unary() {
  return [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
    FailureOr<Value> x = interp.tensorArg(call, 0);
    if (failed(x))
      return failure();
    return Val::ofTensor(OpTy::create(interp.getBuilder(), call.loc, *x));
  };
}

static FunctionConverter relu(bool inplace) {
  return [inplace](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
    FailureOr<Value> x = interp.tensorArg(call, 0);
    if (failed(x))
      return failure();
    bool in = inplace;
    // torch::nn::functional::relu(x, ReLUFuncOptions().inplace(true)).
    if (call.args.size() > 1 && call.args[1].kind == Val::Kind::Options)
      if (const Val *v = call.args[1].options->get("inplace", 0))
        in = v->getInt().value_or(0) != 0;
    return Val::ofTensor(
        nn::ReluOp::create(interp.getBuilder(), call.loc, *x, in));
  };
}

template <typename OpTy> static FunctionConverter softmaxLike() {
  return [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
    FailureOr<Value> x = interp.tensorArg(call, 0);
    FailureOr<int64_t> dim = intArg(interp, call, 1);
    if (failed(x) || failed(dim))
      return failure();
    return Val::ofTensor(OpTy::create(interp.getBuilder(), call.loc, *x,
                                      normalizeDim(*dim, shapeOf(*x).size()),
                                      /*dtype=*/TypeAttr()));
  };
}

static FailureOr<Val> transpose(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  FailureOr<int64_t> a = intArg(interp, call, 1);
  FailureOr<int64_t> b = intArg(interp, call, 2);
  if (failed(x) || failed(a) || failed(b))
    return failure();
  int64_t rank = shapeOf(*x).size();
  int64_t d0 = normalizeDim(*a, rank), d1 = normalizeDim(*b, rank);
  if (d0 < 0 || d1 < 0 || d0 >= rank || d1 >= rank)
    return interp.error(call.loc) << "transpose dimensions out of range";
  return Val::ofTensor(
      nn::TransposeOp::create(interp.getBuilder(), call.loc, *x, d0, d1));
}

/// A factory (torch::randn({...}), torch::zeros(...)): the shape of the
/// tensor, for register_parameter / register_buffer.
static FailureOr<Val> factory(Interpreter &interp, CallInfo &call) {
  SmallVector<int64_t> shape;
  if (!call.args.empty() && call.args[0].kind == Val::Kind::List) {
    std::optional<SmallVector<int64_t>> dims = call.args[0].getInts();
    if (!dims)
      return interp.error(call.loc)
             << "the shape given to '" << call.name << "' is not constant";
    shape = *dims;
  } else if (!call.args.empty() && call.args[0].getInt()) {
    shape.push_back(*call.args[0].getInt());
  } else {
    return interp.error(call.loc)
           << "'" << call.name << "' needs a constant shape";
  }
  Val out;
  out.kind = Val::Kind::List;
  for (int64_t d : shape)
    out.list.push_back(Val::integer(d));
  return out;
}

const llvm::StringMap<FunctionConverter> &vram::cxx_import::getFunctionTable() {
  static const llvm::StringMap<FunctionConverter> table = [] {
    llvm::StringMap<FunctionConverter> t;
    t["relu"] = relu(false);
    t["relu_"] = relu(true);
    t["sigmoid"] = unary<nn::SigmoidOp>();
    t["tanh"] = unary<nn::TanhOp>();
    t["gelu"] = [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      if (failed(x))
        return failure();
      return Val::ofTensor(nn::GeluOp::create(interp.getBuilder(), call.loc, *x,
                                              nn::GeluApproximation::None));
    };
    t["softmax"] = softmaxLike<nn::SoftmaxOp>();
    t["log_softmax"] = softmaxLike<nn::LogSoftmaxOp>();
    // torch::flatten flattens from dimension 0 by default.
    t["flatten"] = [](Interpreter &interp, CallInfo &call) {
      return flatten(interp, call, 0);
    };
    t["transpose"] = transpose;
    t["max_pool2d"] = [](Interpreter &interp,
                         CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      if (failed(x))
        return failure();
      FailureOr<SmallVector<int64_t>> kernel = pairArg(interp, call, 1, {});
      if (failed(kernel))
        return failure();
      if (kernel->empty())
        return interp.error(call.loc) << "max_pool2d needs a kernel size";
      FailureOr<SmallVector<int64_t>> stride =
          pairArg(interp, call, 2, *kernel);
      FailureOr<SmallVector<int64_t>> pad = pairArg(interp, call, 3, {0, 0});
      FailureOr<SmallVector<int64_t>> dilation =
          pairArg(interp, call, 4, {1, 1});
      FailureOr<int64_t> ceil = intArg(interp, call, 5, 0);
      if (failed(stride) || failed(pad) || failed(dilation) || failed(ceil))
        return failure();
      return wrap(pool(interp, call.loc, true, *x, *kernel, *stride, *pad,
                       *dilation, *ceil != 0, true));
    };
    t["avg_pool2d"] = [](Interpreter &interp,
                         CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      if (failed(x))
        return failure();
      FailureOr<SmallVector<int64_t>> kernel = pairArg(interp, call, 1, {});
      if (failed(kernel))
        return failure();
      if (kernel->empty())
        return interp.error(call.loc) << "avg_pool2d needs a kernel size";
      FailureOr<SmallVector<int64_t>> stride =
          pairArg(interp, call, 2, *kernel);
      FailureOr<SmallVector<int64_t>> pad = pairArg(interp, call, 3, {0, 0});
      FailureOr<int64_t> ceil = intArg(interp, call, 4, 0);
      FailureOr<int64_t> countPad = intArg(interp, call, 5, 1);
      if (failed(stride) || failed(pad) || failed(ceil) || failed(countPad))
        return failure();
      return wrap(pool(interp, call.loc, false, *x, *kernel, *stride, *pad,
                       {1, 1}, *ceil != 0, *countPad != 0));
    };
    t["adaptive_avg_pool2d"] = [](Interpreter &interp,
                                  CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      if (failed(x))
        return failure();
      if (call.args.size() < 2)
        return interp.error(call.loc) << "adaptive_avg_pool2d needs a size";
      return wrap(adaptivePool(interp, call.loc, *x, call.args[1]));
    };
    t["dropout"] = [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      if (failed(x))
        return failure();
      std::optional<double> p =
          call.args.size() > 1 ? call.args[1].getReal() : std::nullopt;
      std::optional<int64_t> train =
          call.args.size() > 2 ? call.args[2].getInt() : std::nullopt;
      if (!p || !train)
        return interp.error(call.loc)
               << "torch::dropout(x, p, train): p and train must be "
                  "constants (is_training() is)";
      if (!*train || *p == 0)
        return Val::ofTensor(*x);
      return Val::ofTensor(nn::DropoutOp::create(interp.getBuilder(), call.loc,
                                                 *x, llvm::APFloat(*p), false));
    };
    t["cat"] = [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
      if (call.args.empty() || call.args[0].kind != Val::Kind::List)
        return interp.error(call.loc) << "torch::cat needs a list of tensors";
      FailureOr<int64_t> dim = intArg(interp, call, 1, 0);
      if (failed(dim))
        return failure();
      SmallVector<Value> inputs;
      for (Val &v : call.args[0].list) {
        if (v.kind != Val::Kind::Tensor)
          return interp.error(call.loc) << "torch::cat of " << v.describe();
        inputs.push_back(v.tensor);
      }
      ArrayRef<int64_t> first = shapeOf(inputs[0]);
      int64_t d = normalizeDim(*dim, first.size());
      for (Value v : inputs) {
        ArrayRef<int64_t> s = shapeOf(v);
        bool ok = s.size() == first.size();
        for (size_t k = 0; ok && k < s.size(); ++k)
          ok = int64_t(k) == d || s[k] == first[k];
        if (!ok)
          return interp.error(call.loc)
                 << "torch::cat: shapes " << shapeString(first) << " and "
                 << shapeString(s) << " differ outside dimension " << d;
      }
      return Val::ofTensor(
          nn::ConcatOp::create(interp.getBuilder(), call.loc, inputs, d));
    };
    t["add"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::AddOp>(interp, call, false);
    };
    t["mul"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::MulOp>(interp, call, false);
    };
    for (StringRef name : {"randn", "rand", "zeros", "ones", "empty"})
      t[name] = factory;
    return t;
  }();
  return table;
}

const llvm::StringMap<FunctionConverter> &
vram::cxx_import::getTensorMethodTable() {
  static const llvm::StringMap<FunctionConverter> table = [] {
    llvm::StringMap<FunctionConverter> t;
    t["relu"] = relu(false);
    t["relu_"] = relu(true);
    t["sigmoid"] = unary<nn::SigmoidOp>();
    t["tanh"] = unary<nn::TanhOp>();
    t["softmax"] = softmaxLike<nn::SoftmaxOp>();
    t["log_softmax"] = softmaxLike<nn::LogSoftmaxOp>();
    t["view"] = reshape;
    t["reshape"] = reshape;
    t["transpose"] = transpose;
    // Tensor::flatten also flattens from dimension 0 by default.
    t["flatten"] = [](Interpreter &interp, CallInfo &call) {
      return flatten(interp, call, 0);
    };
    t["size"] = [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      FailureOr<int64_t> dim = intArg(interp, call, 1);
      if (failed(x) || failed(dim))
        return failure();
      int64_t rank = shapeOf(*x).size();
      int64_t d = normalizeDim(*dim, rank);
      if (d < 0 || d >= rank)
        return interp.error(call.loc)
               << "size(" << *dim << ") of a rank-" << rank << " tensor";
      return Val::integer(shapeOf(*x)[d]);
    };
    t["dim"] = [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      if (failed(x))
        return failure();
      return Val::integer(shapeOf(*x).size());
    };
    // Values read at run time: what depends on them has no static shape.
    for (StringRef name : {"item", "tolist", "nonzero"})
      t[name] = [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
        return interp.error(call.loc)
               << "'" << call.name
               << "' reads tensor values at run time: what depends on them "
                  "cannot be modelled statically";
      };
    t["add"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::AddOp>(interp, call, false);
    };
    t["add_"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::AddOp>(interp, call, true);
    };
    t["sub"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::SubOp>(interp, call, false);
    };
    t["mul"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::MulOp>(interp, call, false);
    };
    t["mul_"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::MulOp>(interp, call, true);
    };
    t["div"] = [](Interpreter &interp, CallInfo &call) {
      return binary<nn::DivOp>(interp, call, false);
    };
    return t;
  }();
  return table;
}
