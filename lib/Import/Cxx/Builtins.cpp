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
#include "vram/Dialect/NN/Recurrent.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <limits>

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
           << "torch::nn::" << m.kind << ": channels " << c.in << " -> "
           << c.out << " are not positive multiples of groups " << c.groups;
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

enum class EluKind { Elu, Selu, Celu };

/// torch::nn::ELU(ELUOptions().alpha(a).inplace(b)), SELU(inplace) and
/// CELU(CELUOptions().alpha(a)) as nn.elu with each one's coefficients
/// (SELU's are torch's constants; CELU is elu(x, alpha, 1, 1 / alpha)).
static LayerInfo eluLayer(EluKind kind) {
  return noTensors([kind](Interpreter &interp, Module &m, const Val &input,
                          Location where) -> FailureOr<Val> {
    OptionReader r{interp, m, where};
    FailureOr<double> alpha = r.real("alpha", -1, 1.0);
    FailureOr<bool> inplace =
        r.flag("inplace", kind == EluKind::Selu ? 0 : -1, false);
    if (failed(alpha) || failed(inplace))
      return failure();
    double scale = 1.0, inputScale = 1.0, a = *alpha;
    if (kind == EluKind::Selu) {
      a = 1.6732632423543772848170429916717;
      scale = 1.0507009873554804934193349852946;
    } else if (kind == EluKind::Celu) {
      if (a == 0)
        return interp.error(where)
               << "torch::nn::CELU: alpha 0 divides by zero";
      inputScale = 1.0 / a;
    }
    return Val::ofTensor(nn::EluOp::create(
        interp.getBuilder(), where, input.tensor, llvm::APFloat(a),
        llvm::APFloat(scale), llvm::APFloat(inputScale), *inplace));
  });
}

static FailureOr<Val> wrap(FailureOr<Value> v) {
  if (failed(v))
    return failure();
  return Val::ofTensor(*v);
}

//===----------------------------------------------------------------------===//
// Tensor helpers shared by layers and functions
//===----------------------------------------------------------------------===//

static Type elementTypeOf(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType();
}

static RankedTensorType withShape(Value v, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, elementTypeOf(v));
}

/// The strides of `v` as PyTorch lays it out: a view's (nn.transpose,
/// nn.slice, ...) from its input's, anything else contiguous.
static SmallVector<int64_t> stridesOf(Value v) {
  Operation *def = v.getDefiningOp();
  if (def && isa<nn::AliasingOpInterface>(def) && def->getNumOperands())
    if (auto layout = dyn_cast<nn::LayoutOpInterface>(def))
      if (std::optional<SmallVector<int64_t>> s =
              layout.getResultStrides(stridesOf(def->getOperand(0))))
        return *s;
  return nn::getContiguousStrides(shapeOf(v));
}

/// Tensor::is_contiguous(): strides of size-1 dimensions do not matter.
static bool isContiguous(Value v) {
  ArrayRef<int64_t> shape = shapeOf(v);
  SmallVector<int64_t> strides = stridesOf(v);
  int64_t expected = 1;
  for (int64_t d = int64_t(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] != 1 && strides[d] != expected)
      return false;
    expected *= shape[d];
  }
  return true;
}

/// Tensor::contiguous(): the tensor itself when it is contiguous, else a
/// copy.
static Value makeContiguous(OpBuilder &b, Location loc, Value x) {
  if (isContiguous(x))
    return x;
  return nn::ContiguousOp::create(b, loc, x.getType(), x);
}

static Value reshapeTo(OpBuilder &b, Location loc, Value x,
                       ArrayRef<int64_t> shape) {
  return nn::ReshapeOp::create(b, loc, withShape(x, shape), x);
}

static Value scalarConstant(OpBuilder &b, Location loc, double value) {
  auto type = RankedTensorType::get({}, b.getF32Type());
  return nn::ConstantOp::create(b, loc,
                                DenseElementsAttr::get(type, float(value)));
}

/// An ExpandingArray<n> option: `3` or `{3}`.
static FailureOr<SmallVector<int64_t>>
expandingOption(Interpreter &interp, Module &m, Location where, StringRef name,
                int index, unsigned n,
                std::optional<SmallVector<int64_t>> def = std::nullopt) {
  const Val *v = m.options.get(name, index);
  if ((!v || v->kind == Val::Kind::None) && def)
    return *def;
  if (!v)
    return interp.error(where) << "torch::nn::" << m.kind << ": option '"
                               << name << "' is not given";
  if (std::optional<SmallVector<int64_t>> ints = v->getInts(n))
    return *ints;
  return interp.error(where) << "torch::nn::" << m.kind << ": option '" << name
                             << "' is " << v->describe()
                             << ", not a constant integer (padding modes "
                                "such as torch::kSame are not modelled)";
}

//===----------------------------------------------------------------------===//
// Embedding, Conv1d, MultiheadAttention
//===----------------------------------------------------------------------===//

namespace {
struct EmbeddingConfig {
  int64_t num, dim;
  std::optional<int64_t> paddingIdx;
};
} // namespace

static FailureOr<EmbeddingConfig> readEmbedding(Interpreter &interp, Module &m,
                                                Location where) {
  OptionReader r{interp, m, where};
  FailureOr<int64_t> num = r.integer("num_embeddings", 0);
  FailureOr<int64_t> dim = r.integer("embedding_dim", 1);
  if (failed(num) || failed(dim))
    return failure();
  if (*num <= 0 || *dim <= 0)
    return interp.error(where) << "torch::nn::Embedding: sizes " << *num
                               << " x " << *dim << " must be positive";
  EmbeddingConfig c{*num, *dim, std::nullopt};
  if (const Val *pad = m.options.get("padding_idx");
      pad && pad->kind != Val::Kind::None) {
    std::optional<int64_t> p = pad->getInt();
    if (!p || *p >= c.num || *p < -c.num)
      return interp.error(where)
             << "torch::nn::Embedding: padding_idx is " << pad->describe()
             << ", not a constant index of the table";
    c.paddingIdx = *p < 0 ? *p + c.num : *p;
  }
  // Options that change what the step allocates, not modelled.
  for (StringRef option : {"max_norm", "sparse", "scale_grad_by_freq"})
    if (const Val *v = m.options.get(option);
        v && v->kind != Val::Kind::None && v->getInt().value_or(1) != 0)
      return interp.error(where) << "torch::nn::Embedding: option '" << option
                                 << "' is not modelled by the C++ front end";
  return c;
}

static LayerInfo embeddingLayer() {
  return {[](Interpreter &interp, Module &m,
             clang::SourceLocation where) -> LogicalResult {
            FailureOr<EmbeddingConfig> c =
                readEmbedding(interp, m, interp.loc(where));
            if (failed(c))
              return failure();
            declare(m, "weight", {c->num, c->dim});
            return success();
          },
          [](Interpreter &interp, Module &m, const Val &input,
             Location where) -> FailureOr<Val> {
            FailureOr<EmbeddingConfig> c = readEmbedding(interp, m, where);
            if (failed(c))
              return failure();
            Value ids = input.tensor;
            if (!isa<IntegerType>(elementTypeOf(ids)) ||
                elementTypeOf(ids).isInteger(1))
              return interp.error(where)
                     << "torch::nn::Embedding expects integer indices, got "
                     << ids.getType()
                     << " (give an integer input: --input=8x128:i64)";
            OpBuilder &b = interp.getBuilder();
            return Val::ofTensor(nn::EmbeddingOp::create(
                b, where, tensorOf(interp, m, "weight"), ids,
                c->paddingIdx ? b.getI64IntegerAttr(*c->paddingIdx)
                              : IntegerAttr()));
          }};
}

static FailureOr<ConvConfig> readConv1d(Interpreter &interp, Module &m,
                                        Location where) {
  OptionReader r{interp, m, where};
  FailureOr<int64_t> in = r.integer("in_channels", 0);
  FailureOr<int64_t> out = r.integer("out_channels", 1);
  FailureOr<SmallVector<int64_t>> kernel =
      expandingOption(interp, m, where, "kernel_size", 2, 1);
  FailureOr<SmallVector<int64_t>> stride = expandingOption(
      interp, m, where, "stride", -1, 1, SmallVector<int64_t>{1});
  FailureOr<SmallVector<int64_t>> padding = expandingOption(
      interp, m, where, "padding", -1, 1, SmallVector<int64_t>{0});
  FailureOr<SmallVector<int64_t>> dilation = expandingOption(
      interp, m, where, "dilation", -1, 1, SmallVector<int64_t>{1});
  FailureOr<int64_t> groups = r.integer("groups", -1, 1);
  FailureOr<bool> bias = r.flag("bias", -1, true);
  if (failed(in) || failed(out) || failed(kernel) || failed(stride) ||
      failed(padding) || failed(dilation) || failed(groups) || failed(bias))
    return failure();
  if (*in <= 0 || *out <= 0 || *groups <= 0 || *in % *groups || *out % *groups)
    return interp.error(where)
           << "torch::nn::Conv1d: channels " << *in << " -> " << *out
           << " are not positive multiples of groups " << *groups;
  // As the 2-D convolution LibTorch runs (view1d_as_2d): height 1.
  ConvConfig c;
  c.in = *in;
  c.out = *out;
  c.groups = *groups;
  c.bias = *bias;
  c.kernel = {1, (*kernel)[0]};
  c.stride = {1, (*stride)[0]};
  c.padding = {0, (*padding)[0]};
  c.dilation = {1, (*dilation)[0]};
  return c;
}

/// torch::nn::Conv1d. ATen's _convolution runs a 3-D input as a 2-D
/// convolution of height 1 (view1d_as_2d: input and weight unsqueezed at
/// dimension 2, the output squeezed back), on cuDNN and on the CPU: the
/// same ops here, the views costing nothing.
static LayerInfo conv1dLayer() {
  return {[](Interpreter &interp, Module &m,
             clang::SourceLocation where) -> LogicalResult {
            FailureOr<ConvConfig> c = readConv1d(interp, m, interp.loc(where));
            if (failed(c))
              return failure();
            declare(m, "weight", {c->out, c->in / c->groups, c->kernel[1]});
            if (c->bias)
              declare(m, "bias", {c->out});
            return success();
          },
          [](Interpreter &interp, Module &m, const Val &input,
             Location where) -> FailureOr<Val> {
            FailureOr<ConvConfig> c = readConv1d(interp, m, where);
            if (failed(c))
              return failure();
            Value x = input.tensor;
            ArrayRef<int64_t> s = shapeOf(x);
            if (s.size() != 3 || s[1] != c->in)
              return interp.error(where)
                     << "torch::nn::Conv1d expects a 3-D [N, " << c->in
                     << ", L] input, got " << shapeString(s);
            OpBuilder &b = interp.getBuilder();
            Value x4 = reshapeTo(b, where, x, {s[0], s[1], 1, s[2]});
            if (failed(checkWindow(interp, where, "torch::nn::Conv1d", x4,
                                   c->kernel, c->stride, c->padding,
                                   c->dilation, false)))
              return failure();
            Value w = tensorOf(interp, m, "weight");
            ArrayRef<int64_t> ws = shapeOf(w);
            Value w4 = reshapeTo(b, where, w, {ws[0], ws[1], 1, ws[2]});
            Value y = nn::Conv2dOp::create(
                b, where, x4, w4, tensorOf(interp, m, "bias"), c->stride,
                c->padding, c->dilation, c->groups);
            ArrayRef<int64_t> ys = shapeOf(y);
            return Val::ofTensor(reshapeTo(b, where, y, {ys[0], ys[1], ys[3]}));
          }};
}

namespace {
struct AttentionConfig {
  int64_t embed, heads, kdim, vdim;
  double dropout;
  bool bias;
  bool sameEmbed() const { return kdim == embed && vdim == embed; }
};
} // namespace

static FailureOr<AttentionConfig> readAttention(Interpreter &interp, Module &m,
                                                Location where) {
  OptionReader r{interp, m, where};
  FailureOr<int64_t> embed = r.integer("embed_dim", 0);
  FailureOr<int64_t> heads = r.integer("num_heads", 1);
  if (failed(embed) || failed(heads))
    return failure();
  FailureOr<int64_t> kdim = r.integer("kdim", -1, *embed);
  FailureOr<int64_t> vdim = r.integer("vdim", -1, *embed);
  FailureOr<double> dropout = r.real("dropout", -1, 0.0);
  FailureOr<bool> bias = r.flag("bias", -1, true);
  FailureOr<bool> biasKv = r.flag("add_bias_kv", -1, false);
  FailureOr<bool> zeroAttn = r.flag("add_zero_attn", -1, false);
  if (failed(kdim) || failed(vdim) || failed(dropout) || failed(bias) ||
      failed(biasKv) || failed(zeroAttn))
    return failure();
  if (*embed <= 0 || *heads <= 0 || *embed % *heads)
    return interp.error(where)
           << "torch::nn::MultiheadAttention: embed_dim " << *embed
           << " must be divisible by num_heads " << *heads;
  if (*biasKv || *zeroAttn)
    return interp.error(where) << "torch::nn::MultiheadAttention: "
                               << (*biasKv ? "add_bias_kv" : "add_zero_attn")
                               << " is not modelled by the C++ front end";
  return AttentionConfig{*embed, *heads, *kdim, *vdim, *dropout, *bias};
}

/// The value of a tensor argument, or null for an undefined tensor
/// (`{}`, `torch::Tensor()`).
static FailureOr<Value> optionalTensor(Interpreter &interp, const Val &v,
                                       Location where, StringRef what) {
  if (v.kind == Val::Kind::None ||
      (v.kind == Val::Kind::List && v.list.empty()))
    return Value();
  if (v.kind == Val::Kind::Tensor)
    return v.tensor;
  if (v.kind == Val::Kind::Param)
    return interp.materialize(*v.module, *v.module->findTensor(v.s));
  return interp.error(where) << "torch::nn::MultiheadAttention: " << what
                             << " is " << v.describe() << ", not a tensor";
}

/// torch::nn::MultiheadAttention as LibTorch 1.13's C++ frontend runs it
/// (torch/nn/functional/activation.h, detail::multi_head_attention_forward):
/// inputs [L, N, E] (sequence first); the in-projection as one linear when
/// query, key and value are the same tensor (`torch::equal`, modelled as
/// "the same value"), two when key and value are, else three; chunks of it
/// as views; `q * scaling`; `.contiguous().view(...)` copies of the strided
/// chunks; bmm, the additive attn_mask in place, softmax, dropout, bmm; the
/// output's transpose(0, 1).contiguous() copy and out_proj; with
/// need_weights (the default), the weights averaged over heads (LibTorch's
/// `sum(1) / num_heads`: a reduction and a division, each a new tensor).
static FailureOr<Val> callAttention(Interpreter &interp, Module &m,
                                    ArrayRef<Val> args, Location where) {
  FailureOr<AttentionConfig> c = readAttention(interp, m, where);
  if (failed(c))
    return failure();
  if (args.size() < 3 || args.size() > 7)
    return interp.error(where) << "torch::nn::MultiheadAttention's forward "
                                  "takes query, key, value and up to four "
                                  "optional arguments";
  SmallVector<Value, 3> qkv;
  for (unsigned k = 0; k < 3; ++k) {
    FailureOr<Value> t = optionalTensor(interp, args[k], where,
                                        k == 0   ? "query"
                                        : k == 1 ? "key"
                                                 : "value");
    if (failed(t))
      return failure();
    if (!*t)
      return interp.error(where)
             << "torch::nn::MultiheadAttention: query, key and value are "
                "needed";
    qkv.push_back(*t);
  }
  auto optionalArg = [&](unsigned k) {
    return k < args.size() ? args[k] : Val();
  };
  FailureOr<Value> paddingMask =
      optionalTensor(interp, optionalArg(3), where, "key_padding_mask");
  FailureOr<Value> attnMask =
      optionalTensor(interp, optionalArg(5), where, "attn_mask");
  if (failed(paddingMask) || failed(attnMask))
    return failure();
  auto flagArg = [&](unsigned k) -> std::optional<bool> {
    Val v = optionalArg(k);
    if (v.kind == Val::Kind::None)
      return true;
    if (std::optional<int64_t> i = v.getInt())
      return *i != 0;
    return std::nullopt;
  };
  std::optional<bool> needWeights = flagArg(4), average = flagArg(6);
  if (!needWeights || !average)
    return interp.error(where)
           << "torch::nn::MultiheadAttention: need_weights and "
              "average_attn_weights must be constants";

  Value query = qkv[0], key = qkv[1], value = qkv[2];
  ArrayRef<int64_t> qs = shapeOf(query), ks = shapeOf(key);
  int64_t E = c->embed, H = c->heads, hd = E / H;
  if (qs.size() != 3 || qs[2] != E || ks.size() != 3 || shapeOf(value) != ks ||
      ks[1] != qs[1] || ks[2] != c->kdim)
    return interp.error(where)
           << "torch::nn::MultiheadAttention(" << E << ", " << H
           << ") expects query [L, N, " << E << "] and key and value [S, N, "
           << c->kdim << "] (LibTorch 1.13: sequence first), got "
           << shapeString(qs) << ", " << shapeString(ks) << ", "
           << shapeString(shapeOf(value));
  int64_t L = qs[0], N = qs[1], S = ks[0];
  OpBuilder &b = interp.getBuilder();
  Value bias = tensorOf(interp, m, "in_proj_bias");
  auto rows = [&](Value t, int64_t start, int64_t end) -> Value {
    if (!t)
      return t;
    return nn::SliceOp::create(b, where, t, /*dim=*/0, start, end);
  };
  auto chunks = [&](Value t, int64_t n) {
    SmallVector<Value> out;
    int64_t size = shapeOf(t).back() / n;
    for (int64_t k = 0; k < n; ++k)
      out.push_back(nn::SliceOp::create(b, where, t, /*dim=*/2, k * size,
                                        (k + 1) * size));
    return out;
  };
  auto linear = [&](Value x, Value w, Value bb) -> Value {
    return nn::LinearOp::create(b, where, x, w, bb);
  };
  Value q, k, v;
  if (c->sameEmbed()) {
    Value w = tensorOf(interp, m, "in_proj_weight");
    if (query == key && key == value) {
      SmallVector<Value> parts = chunks(linear(query, w, bias), 3);
      q = parts[0], k = parts[1], v = parts[2];
    } else if (key == value) {
      q = linear(query, rows(w, 0, E), rows(bias, 0, E));
      SmallVector<Value> parts =
          chunks(linear(key, rows(w, E, 3 * E), rows(bias, E, 3 * E)), 2);
      k = parts[0], v = parts[1];
    } else {
      q = linear(query, rows(w, 0, E), rows(bias, 0, E));
      k = linear(key, rows(w, E, 2 * E), rows(bias, E, 2 * E));
      v = linear(value, rows(w, 2 * E, 3 * E), rows(bias, 2 * E, 3 * E));
    }
  } else {
    q = linear(query, tensorOf(interp, m, "q_proj_weight"), rows(bias, 0, E));
    k = linear(key, tensorOf(interp, m, "k_proj_weight"), rows(bias, E, 2 * E));
    v = linear(value, tensorOf(interp, m, "v_proj_weight"),
               rows(bias, 2 * E, 3 * E));
  }
  // q = q * scaling, with scaling = 1 / sqrt(head_dim).
  q = nn::MulOp::create(b, where, q,
                        scalarConstant(b, where, 1.0 / std::sqrt(double(hd))),
                        /*inplace=*/false);
  auto heads = [&](Value t, int64_t len) {
    Value viewed =
        reshapeTo(b, where, makeContiguous(b, where, t), {len, N * H, hd});
    return Value(nn::TransposeOp::create(b, where, viewed, 0, 1));
  };
  q = heads(q, L);
  k = heads(k, S);
  v = heads(v, S);
  Value weights = nn::BmmOp::create(b, where, q,
                                    nn::TransposeOp::create(b, where, k, 1, 2));
  if (*attnMask) {
    if (!isa<FloatType>(elementTypeOf(*attnMask)) ||
        shapeOf(*attnMask) != ArrayRef<int64_t>{L, S})
      return interp.error(where)
             << "torch::nn::MultiheadAttention: LibTorch 1.13 adds attn_mask "
                "to the scores (attn_output_weights += attn_mask): a float ["
             << L << ", " << S << "] mask is modelled, got "
             << attnMask->getType();
    weights = nn::AddOp::create(b, where, weights, *attnMask, /*inplace=*/true);
  }
  if (*paddingMask) {
    if (!elementTypeOf(*paddingMask).isInteger(1) ||
        shapeOf(*paddingMask) != ArrayRef<int64_t>{N, S})
      return interp.error(where)
             << "torch::nn::MultiheadAttention: key_padding_mask must be a "
                "bool ["
             << N << ", " << S << "] tensor, got " << paddingMask->getType();
    Value scores = reshapeTo(b, where, weights, {N, H, L, S});
    Value mask = reshapeTo(b, where, *paddingMask, {N, 1, 1, S});
    scores = nn::MaskedFillOp::create(
        b, where, scores, mask,
        llvm::APFloat(-std::numeric_limits<double>::infinity()),
        /*inplace=*/false);
    weights = reshapeTo(b, where, scores, {N * H, L, S});
  }
  weights = nn::SoftmaxOp::create(b, where, weights, 2, /*dtype=*/TypeAttr());
  if (interp.isTraining() && c->dropout > 0)
    weights = nn::DropoutOp::create(b, where, weights,
                                    llvm::APFloat(c->dropout), false);
  Value out = nn::BmmOp::create(b, where, weights, v);
  out = makeContiguous(b, where, nn::TransposeOp::create(b, where, out, 0, 1));
  out = reshapeTo(b, where, out, {L, N, E});
  // out_proj, located as its own module.
  Module *outProj = nullptr;
  for (auto &child : m.children)
    if (child.first == "out_proj")
      outProj = child.second.get();
  outProj->called = true;
  Location projLoc = where;
  if (auto name = dyn_cast<NameLoc>(where))
    projLoc = NameLoc::get(b.getStringAttr(outProj->path), name.getChildLoc());
  out = nn::LinearOp::create(b, projLoc, out,
                             tensorOf(interp, *outProj, "weight"),
                             tensorOf(interp, *outProj, "bias"));
  Val result;
  result.kind = Val::Kind::List;
  result.list.push_back(Val::ofTensor(out));
  if (!*needWeights) {
    result.list.push_back(Val());
    return result;
  }
  weights = reshapeTo(b, where, weights, {N, H, L, S});
  if (*average) {
    weights = nn::MeanOp::create(b, where, withShape(weights, {N, L, S}),
                                 weights, b.getDenseI64ArrayAttr({1}),
                                 /*keepdim=*/false);
    weights = nn::DivOp::create(b, where, weights,
                                scalarConstant(b, where, double(H)),
                                /*inplace=*/false);
  }
  result.list.push_back(Val::ofTensor(weights));
  return result;
}

static LayerInfo attentionLayer() {
  LayerInfo info;
  info.declare = [](Interpreter &interp, Module &m,
                    clang::SourceLocation where) -> LogicalResult {
    FailureOr<AttentionConfig> c = readAttention(interp, m, interp.loc(where));
    if (failed(c))
      return failure();
    int64_t E = c->embed;
    // The registration order of MultiheadAttentionImpl::reset().
    if (c->sameEmbed()) {
      declare(m, "in_proj_weight", {3 * E, E});
    } else {
      declare(m, "q_proj_weight", {E, E});
      declare(m, "k_proj_weight", {E, c->kdim});
      declare(m, "v_proj_weight", {E, c->vdim});
    }
    if (c->bias)
      declare(m, "in_proj_bias", {3 * E});
    auto outProj = std::make_shared<Module>();
    outProj->kind = "Linear";
    outProj->declLoc = where;
    outProj->options.positional = {Val::integer(E), Val::integer(E)};
    outProj->options.fields["bias"] = Val::boolean(c->bias);
    if (failed(getLayerTable().find("Linear")->second.declare(interp, *outProj,
                                                              where)))
      return failure();
    m.children.emplace_back("out_proj", std::move(outProj));
    return success();
  };
  info.callMany = callAttention;
  return info;
}

/// LSTMOptions / GRUOptions / RNNOptions(input_size, hidden_size):
/// num_layers, bias, batch_first, dropout, bidirectional, LSTM's proj_size,
/// RNN's nonlinearity.
struct LstmConfig {
  int64_t input, hidden;
  nn::RnnConfig module;
  bool relu = false;
  /// The width of h and of the outputs: proj_size, else hidden_size.
  int64_t outSize() const { return module.projSize ? module.projSize : hidden; }
};

static FailureOr<LstmConfig> readRnn(Interpreter &interp, Module &m,
                                     Location where, StringRef name) {
  OptionReader r{interp, m, where};
  FailureOr<int64_t> input = r.integer("input_size", 0),
                     hidden = r.integer("hidden_size", 1),
                     layers = r.integer("num_layers", -1, 1),
                     proj = r.integer("proj_size", -1, 0);
  FailureOr<bool> bias = r.flag("bias", -1, true),
                  batchFirst = r.flag("batch_first", -1, false),
                  bidirectional = r.flag("bidirectional", -1, false);
  FailureOr<double> dropout = r.real("dropout", -1, 0.0);
  if (failed(input) || failed(hidden) || failed(layers) || failed(proj) ||
      failed(bias) || failed(batchFirst) || failed(bidirectional) ||
      failed(dropout))
    return failure();
  if (*input <= 0 || *hidden <= 0 || *layers <= 0)
    return interp.error(where)
           << "torch::nn::" << name
           << ": input_size, hidden_size and num_layers must be positive, got "
           << *input << ", " << *hidden << ", " << *layers;
  if (*proj < 0 || *proj >= *hidden || (*proj != 0 && name != "LSTM"))
    return interp.error(where)
           << "torch::nn::" << name << ": proj_size " << *proj
           << (name == "LSTM" ? " must be in [0, hidden_size)"
                              : " is an LSTM option");
  LstmConfig c{*input, *hidden, {}};
  c.module.projSize = *proj;
  if (const Val *v = m.options.get("nonlinearity", -1)) {
    if (name != "RNN" || v->kind != Val::Kind::Str ||
        (v->s != "kTanh" && v->s != "kReLU"))
      return interp.error(where)
             << "torch::nn::" << name << ": nonlinearity is " << v->describe()
             << ", not torch::kTanh or torch::kReLU of an RNN";
    c.relu = v->s == "kReLU";
  }
  c.module.numLayers = *layers;
  c.module.hasBiases = *bias;
  c.module.batchFirst = *batchFirst;
  c.module.bidirectional = *bidirectional;
  c.module.dropout = *dropout;
  c.module.train = interp.isTraining();
  return c;
}

/// torch::nn::LSTM, GRU and RNN: their forward makes zero initial states
/// [layers * directions, B, H] and calls torch::lstm / torch::gru /
/// torch::rnn_tanh or rnn_relu, which PyTorch runs on the CPU as buildLstm /
/// buildGru / buildSimpleRnn (Recurrent.h) build them. The result is the
/// tuple (output, (hy, cy)) / (output, hy).
static LayerInfo rnnLayer(StringRef name, int64_t gates) {
  bool lstm = name == "LSTM";
  LayerInfo info;
  info.declare = [=](Interpreter &interp, Module &m,
                     clang::SourceLocation where) -> LogicalResult {
    FailureOr<LstmConfig> c = readRnn(interp, m, interp.loc(where), name);
    if (failed(c))
      return failure();
    int64_t directions = c->module.bidirectional ? 2 : 1;
    // The registration order of RNNImplBase::reset().
    for (int64_t layer = 0; layer < c->module.numLayers; ++layer)
      for (int64_t direction = 0; direction < directions; ++direction) {
        std::string suffix =
            "_l" + std::to_string(layer) + (direction ? "_reverse" : "");
        int64_t in = layer == 0 ? c->input : c->outSize() * directions;
        declare(m, "weight_ih" + suffix, {gates * c->hidden, in});
        declare(m, "weight_hh" + suffix, {gates * c->hidden, c->outSize()});
        if (c->module.hasBiases) {
          declare(m, "bias_ih" + suffix, {gates * c->hidden});
          declare(m, "bias_hh" + suffix, {gates * c->hidden});
        }
        if (c->module.projSize)
          declare(m, "weight_hr" + suffix, {c->module.projSize, c->hidden});
      }
    return success();
  };
  info.callMany = [=](Interpreter &interp, Module &m, ArrayRef<Val> args,
                      Location where) -> FailureOr<Val> {
    FailureOr<LstmConfig> c = readRnn(interp, m, where, name);
    if (failed(c))
      return failure();
    if (args.size() != 1 || args[0].kind != Val::Kind::Tensor)
      return interp.error(where)
             << "torch::nn::" << name
             << "'s forward is modelled for one tensor argument (zero "
                "initial states)";
    Value x = args[0].tensor;
    ArrayRef<int64_t> shape = shapeOf(x);
    if (shape.size() != 3 || shape[2] != c->input)
      return interp.error(where)
             << "torch::nn::" << name << " expects a batched input with "
             << c->input << " features, got " << shapeString(shape);
    OpBuilder &b = interp.getBuilder();
    int64_t stack = c->module.numLayers * (c->module.bidirectional ? 2 : 1);
    int64_t batch = shape[c->module.batchFirst ? 0 : 1];
    Type et = cast<RankedTensorType>(x.getType()).getElementType();
    auto zeros = [&](int64_t width) -> Value {
      auto stateType = RankedTensorType::get({stack, batch, width}, et);
      return nn::ConstantOp::create(
          b, where, stateType,
          DenseElementsAttr::get(
              stateType, b.getFloatAttr(stateType.getElementType(), 0.0)),
          /*wrapped_number=*/nullptr, /*model_dtype=*/nullptr);
    };
    SmallVector<Value> params;
    for (const TensorDecl &t : m.tensors)
      params.push_back(tensorOf(interp, m, t.name));
    Val result;
    result.kind = Val::Kind::List;
    if (!lstm) {
      FailureOr<nn::RnnResults> rnn =
          name == "GRU"
              ? nn::buildGru(b, where, c->module, x, zeros(c->hidden), params)
              : nn::buildSimpleRnn(b, where, c->module, c->relu, x,
                                   zeros(c->hidden), params);
      if (failed(rnn))
        return failure();
      result.list = {Val::ofTensor(rnn->output), Val::ofTensor(rnn->hy)};
      return result;
    }
    // With projections h0 is [L * D, B, proj_size].
    Value h0 = zeros(c->outSize()), c0 = zeros(c->hidden);
    FailureOr<nn::RnnResults> rnn =
        nn::buildLstm(b, where, c->module, x, h0, c0, params);
    if (failed(rnn))
      return failure();
    Val state;
    state.kind = Val::Kind::List;
    state.list = {Val::ofTensor(rnn->hy), Val::ofTensor(rnn->cy)};
    result.list = {Val::ofTensor(rnn->output), state};
    return result;
  };
  return info;
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
    // ConvTranspose2dOptions(in, out, kernel): Conv2d's options plus
    // output_padding; the weight is [in, out / groups, kh, kw].
    t["ConvTranspose2d"] = {
        [](Interpreter &interp, Module &m,
           clang::SourceLocation where) -> LogicalResult {
          FailureOr<ConvConfig> c = readConv(interp, m, interp.loc(where));
          if (failed(c))
            return failure();
          declare(m, "weight",
                  {c->in, c->out / c->groups, c->kernel[0], c->kernel[1]});
          if (c->bias)
            declare(m, "bias", {c->out});
          return success();
        },
        [](Interpreter &interp, Module &m, const Val &input,
           Location where) -> FailureOr<Val> {
          FailureOr<ConvConfig> c = readConv(interp, m, where);
          OptionReader r{interp, m, where};
          FailureOr<SmallVector<int64_t>> outputPadding =
              r.pair("output_padding", -1, SmallVector<int64_t>{0, 0});
          if (failed(c) || failed(outputPadding))
            return failure();
          Value x = input.tensor;
          if (failed(checkImage(interp, where, "torch::nn::ConvTranspose2d", x,
                                c->in)))
            return failure();
          OpBuilder &b = interp.getBuilder();
          return Val::ofTensor(nn::ConvTranspose2dOp::create(
              b, where, x, tensorOf(interp, m, "weight"),
              tensorOf(interp, m, "bias"), b.getDenseI64ArrayAttr(c->stride),
              b.getDenseI64ArrayAttr(c->padding),
              b.getDenseI64ArrayAttr(*outputPadding),
              b.getDenseI64ArrayAttr(c->dilation),
              b.getI64IntegerAttr(c->groups)));
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
    // torch::nn::InstanceNorm2d(InstanceNorm2dOptions(C).affine(true)):
    // nn.group_norm {instance}, one group per channel (F.instance_norm's
    // batch_norm keeps the weight repeated per sample). Running statistics
    // (track_running_stats) are not modelled.
    t["InstanceNorm2d"] = {
        [](Interpreter &interp, Module &m,
           clang::SourceLocation where) -> LogicalResult {
          OptionReader r{interp, m, interp.loc(where)};
          FailureOr<int64_t> c = r.integer("num_features", 0);
          FailureOr<bool> affine = r.flag("affine", -1, false);
          FailureOr<bool> track = r.flag("track_running_stats", -1, false);
          if (failed(c) || failed(affine) || failed(track))
            return failure();
          if (*track)
            return interp.error(interp.loc(where))
                   << "torch::nn::InstanceNorm2d with track_running_stats "
                      "is not modelled yet";
          if (*affine) {
            declare(m, "weight", {*c});
            declare(m, "bias", {*c});
          }
          return success();
        },
        [](Interpreter &interp, Module &m, const Val &input,
           Location where) -> FailureOr<Val> {
          OptionReader r{interp, m, where};
          FailureOr<int64_t> c = r.integer("num_features", 0);
          FailureOr<double> eps = r.real("eps", -1, 1e-5);
          if (failed(c) || failed(eps) ||
              failed(checkImage(interp, where, "torch::nn::InstanceNorm2d",
                                input.tensor, *c)))
            return failure();
          OpBuilder &b = interp.getBuilder();
          return Val::ofTensor(nn::GroupNormOp::create(
              b, where, input.tensor, tensorOf(interp, m, "weight"),
              tensorOf(interp, m, "bias"), b.getI64IntegerAttr(*c),
              b.getF64FloatAttr(*eps), b.getUnitAttr()));
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
    // torch::nn::Upsample(UpsampleOptions().scale_factor({2, 2})
    // .mode(torch::kBilinear).align_corners(true)), or .size({H, W}):
    // nn.upsample_nearest2d (LibTorch's default mode) or
    // nn.upsample_bilinear2d, the output floor(in * factor) or the size.
    t["Upsample"] = noTensors([](Interpreter &interp, Module &m,
                                 const Val &input,
                                 Location where) -> FailureOr<Val> {
      OptionReader r{interp, m, where};
      const char *what = "torch::nn::Upsample";
      if (failed(checkImage(interp, where, what, input.tensor, -1)))
        return failure();
      std::string mode = "kNearest";
      if (const Val *v = m.options.get("mode", -1)) {
        if (v->kind != Val::Kind::Str)
          return interp.error(where)
                 << what << ": mode is " << v->describe()
                 << ", not a LibTorch mode constant (torch::kNearest, ...)";
        mode = v->s;
      }
      if (mode != "kNearest" && mode != "kBilinear")
        return interp.error(where)
               << what << ": mode torch::" << mode
               << " is not modelled (torch::kNearest and torch::kBilinear are)";
      FailureOr<bool> align = r.flag("align_corners", -1, false);
      if (failed(align))
        return failure();
      if (*align && mode == "kNearest")
        return interp.error(where)
               << what << ": align_corners applies to interpolating modes, "
               << "not torch::kNearest (LibTorch raises)";
      ArrayRef<int64_t> in = shapeOf(input.tensor);
      SmallVector<int64_t> out(in);
      SmallVector<double> factors;
      const Val *size = m.options.get("size", -1);
      const Val *scale = m.options.get("scale_factor", -1);
      bool hasSize = size && size->kind != Val::Kind::None;
      bool hasScale = scale && scale->kind != Val::Kind::None;
      if (hasSize == hasScale)
        return interp.error(where)
               << what << ": give exactly one of size and scale_factor";
      if (hasSize) {
        std::optional<SmallVector<int64_t>> hw = size->getInts(2);
        if (!hw || (*hw)[0] < 1 || (*hw)[1] < 1)
          return interp.error(where) << what << ": size is " << size->describe()
                                     << ", not two positive constant integers";
        out[2] = (*hw)[0];
        out[3] = (*hw)[1];
      } else {
        for (const Val &f : scale->kind == Val::Kind::List
                                ? scale->list
                                : std::vector<Val>{*scale, *scale})
          if (std::optional<double> d = f.getReal())
            factors.push_back(*d);
        if (factors.size() != 2)
          return interp.error(where)
                 << what << ": scale_factor is " << scale->describe()
                 << ", not two constant numbers";
        for (unsigned d = 0; d < 2; ++d) {
          double scaled = std::floor(in[2 + d] * factors[d]);
          if (!(factors[d] > 0 && scaled >= 1 && scaled <= double(INT32_MAX)))
            return interp.error(where)
                   << what << ": scale factor " << factors[d]
                   << " gives no valid size for " << shapeString(in);
          out[2 + d] = static_cast<int64_t>(scaled);
        }
      }
      OpBuilder &b = interp.getBuilder();
      auto type = cast<RankedTensorType>(input.tensor.getType()).clone(out);
      if (mode == "kNearest")
        return Val::ofTensor(
            nn::UpsampleNearest2dOp::create(b, where, type, input.tensor));
      return Val::ofTensor(nn::UpsampleBilinear2dOp::create(
          b, where, type, input.tensor, *align,
          factors.empty() ? DenseF64ArrayAttr()
                          : b.getDenseF64ArrayAttr(factors)));
    });
    t["ReLU"] = noTensors([](Interpreter &interp, Module &m, const Val &input,
                             Location where) -> FailureOr<Val> {
      FailureOr<bool> inplace =
          OptionReader{interp, m, where}.flag("inplace", 0, false);
      if (failed(inplace))
        return failure();
      return Val::ofTensor(nn::ReluOp::create(interp.getBuilder(), where,
                                              input.tensor, *inplace));
    });
    // torch::nn::LeakyReLU(LeakyReLUOptions().negative_slope(0.2)), ELU,
    // SELU(inplace), CELU: nn.leaky_relu and nn.elu (docs/Semantics.md).
    t["LeakyReLU"] =
        noTensors([](Interpreter &interp, Module &m, const Val &input,
                     Location where) -> FailureOr<Val> {
          OptionReader r{interp, m, where};
          FailureOr<double> slope = r.real("negative_slope", -1, 0.01);
          FailureOr<bool> inplace = r.flag("inplace", -1, false);
          if (failed(slope) || failed(inplace))
            return failure();
          return Val::ofTensor(
              nn::LeakyReluOp::create(interp.getBuilder(), where, input.tensor,
                                      llvm::APFloat(*slope), *inplace));
        });
    // torch::nn::PReLU(PReLUOptions().num_parameters(n).init(0.25)): a [n]
    // weight (LibTorch's default n = 1), applied as torch::prelu, nn.prelu.
    // `init` is only the weight's initial value.
    t["PReLU"] = {[](Interpreter &interp, Module &m,
                     clang::SourceLocation where) -> LogicalResult {
                    OptionReader r{interp, m, interp.loc(where)};
                    FailureOr<int64_t> n = r.integer("num_parameters", -1, 1);
                    FailureOr<double> init = r.real("init", -1, 0.25);
                    if (failed(n) || failed(init))
                      return failure();
                    if (*n <= 0)
                      return interp.error(interp.loc(where))
                             << "torch::nn::PReLU: num_parameters " << *n
                             << " must be positive";
                    declare(m, "weight", {*n});
                    return success();
                  },
                  [](Interpreter &interp, Module &m, const Val &input,
                     Location where) -> FailureOr<Val> {
                    Value x = input.tensor, w = tensorOf(interp, m, "weight");
                    ArrayRef<int64_t> s = shapeOf(x);
                    int64_t n = shapeOf(w)[0];
                    if (s.empty() || (n != 1 && (s.size() < 2 || s[1] != n)))
                      return interp.error(where)
                             << "torch::nn::PReLU with " << n
                             << " parameters does not fit input "
                             << shapeString(s)
                             << " (one or one per channel, dimension 1)";
                    return Val::ofTensor(
                        nn::PreluOp::create(interp.getBuilder(), where, x, w));
                  }};
    t["ELU"] = eluLayer(EluKind::Elu);
    t["SELU"] = eluLayer(EluKind::Selu);
    t["CELU"] = eluLayer(EluKind::Celu);
    t["Softplus"] =
        noTensors([](Interpreter &interp, Module &m, const Val &input,
                     Location where) -> FailureOr<Val> {
          OptionReader r{interp, m, where};
          FailureOr<double> beta = r.real("beta", -1, 1.0);
          FailureOr<double> threshold = r.real("threshold", -1, 20.0);
          if (failed(beta) || failed(threshold))
            return failure();
          return Val::ofTensor(nn::SoftplusOp::create(
              interp.getBuilder(), where, input.tensor, llvm::APFloat(*beta),
              llvm::APFloat(*threshold)));
        });
    t["Mish"] = noTensors([](Interpreter &interp, Module &, const Val &input,
                             Location where) -> FailureOr<Val> {
      return Val::ofTensor(
          nn::MishOp::create(interp.getBuilder(), where, input.tensor, false));
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
    t["Embedding"] = embeddingLayer();
    t["Conv1d"] = conv1dLayer();
    t["MultiheadAttention"] = attentionLayer();
    t["LSTM"] = rnnLayer("LSTM", /*gates=*/4);
    t["GRU"] = rnnLayer("GRU", /*gates=*/3);
    t["RNN"] = rnnLayer("RNN", /*gates=*/1);
    t["Softmax"] = noTensors([](Interpreter &interp, Module &m,
                                const Val &input,
                                Location where) -> FailureOr<Val> {
      FailureOr<int64_t> dim = OptionReader{interp, m, where}.integer("dim", 0);
      if (failed(dim))
        return failure();
      int64_t rank = shapeOf(input.tensor).size();
      int64_t d = *dim < 0 ? *dim + rank : *dim;
      if (d < 0 || d >= rank)
        return interp.error(where) << "torch::nn::Softmax: dimension " << *dim
                                   << " is out of range for rank " << rank;
      return Val::ofTensor(nn::SoftmaxOp::create(
          interp.getBuilder(), where, input.tensor, d, /*dtype=*/TypeAttr()));
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

//===----------------------------------------------------------------------===//
// Matrix products, masks and constant tensors
//===----------------------------------------------------------------------===//

/// The element type of a c10::ScalarType (torch::kFloat, torch::kBool, ...),
/// or null.
static Type scalarTypeToMlir(OpBuilder &b, int64_t scalarType) {
  switch (scalarType) {
  case 3: // Int
    return b.getI32Type();
  case 4: // Long
    return b.getI64Type();
  case 5: // Half
    return b.getF16Type();
  case 6: // Float
    return b.getF32Type();
  case 7: // Double
    return b.getF64Type();
  case 11: // Bool
    return b.getI1Type();
  case 15: // BFloat16
    return b.getBF16Type();
  default:
    return Type();
  }
}

/// The dtype a TensorOptions (`torch::kBool`, `torch::dtype(torch::kBool)`,
/// `TensorOptions().dtype(...)`) argument names: null when it names none,
/// failure when it names one the front end does not model.
static FailureOr<Type> dtypeArg(Interpreter &interp, CallInfo &call,
                                unsigned index) {
  if (index >= call.args.size())
    return Type();
  const Val &v = call.args[index];
  const Val *dtype = &v;
  if (v.kind == Val::Kind::Options)
    dtype = v.options->get("dtype", 0);
  if (!dtype || dtype->kind == Val::Kind::None)
    return Type();
  if (std::optional<int64_t> s = dtype->getInt())
    if (Type t = scalarTypeToMlir(interp.getBuilder(), *s))
      return t;
  return interp.error(call.loc)
         << "'" << call.name << "': the dtype " << dtype->describe()
         << " is not modelled (float, half, bfloat16, double, long, int, "
            "bool)";
}

/// Whether argument `index` of a Tensor method is declared as a
/// c10::Device (`x.to(device)`), from the C++ overload the call picked.
static bool isDeviceArg(CallInfo &call, unsigned index) {
  auto *member = dyn_cast<clang::CXXMemberCallExpr>(call.expr);
  if (!member || !member->getMethodDecl() || index == 0 ||
      index - 1 >= member->getMethodDecl()->getNumParams())
    return false;
  std::string type = member->getMethodDecl()
                         ->getParamDecl(index - 1)
                         ->getType()
                         .getNonReferenceType()
                         .getUnqualifiedType()
                         .getAsString();
  return StringRef(type).contains("Device");
}

/// The values of a constant tensor (nn.constant) as doubles, or nullopt
/// when `v` is not one.
static std::optional<std::vector<double>> constantValues(Value v) {
  auto constant = v.getDefiningOp<nn::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto attr = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!attr)
    return std::nullopt;
  std::vector<double> out;
  out.reserve(attr.getNumElements());
  if (isa<FloatType>(attr.getElementType())) {
    for (const APFloat &f : attr.getValues<APFloat>())
      out.push_back(f.convertToDouble());
  } else if (isa<IntegerType>(attr.getElementType())) {
    bool isBool = attr.getElementType().isInteger(1);
    for (const APInt &i : attr.getValues<APInt>())
      out.push_back(isBool ? double(i.getBoolValue())
                           : double(i.getSExtValue()));
  } else {
    return std::nullopt;
  }
  return out;
}

/// A constant tensor of `type` with `values` (one value: a splat).
static Value makeConstant(OpBuilder &b, Location loc, RankedTensorType type,
                          ArrayRef<double> values) {
  Type element = type.getElementType();
  DenseElementsAttr attr;
  if (auto f = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> data;
    for (double d : values) {
      APFloat x(d);
      bool lost;
      x.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      data.push_back(x);
    }
    attr = DenseElementsAttr::get(type, data);
  } else {
    unsigned width = element.getIntOrFloatBitWidth();
    SmallVector<APInt> data;
    for (double d : values)
      data.push_back(width == 1 ? APInt(1, d != 0)
                                : APInt(width, int64_t(d), /*isSigned=*/true));
    attr = DenseElementsAttr::get(type, data);
  }
  return nn::ConstantOp::create(b, loc, attr);
}

/// Constants the front end folds are kept small enough to hold as
/// attributes.
static constexpr int64_t kMaxFoldedElements = int64_t(1) << 24;

/// A factory: in a constructor, the shape of a parameter or buffer
/// (`register_buffer("mask", torch::zeros({4, 4}))`); in forward(), a
/// constant tensor (`torch::ones({T, T}, torch::kBool)`,
/// `torch::full({T, T}, -INFINITY)`) whose values only masks read: random
/// factories are constants too, as their values do not change what is
/// allocated.
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
  if (!call.inForward) {
    Val out;
    out.kind = Val::Kind::List;
    for (int64_t d : shape)
      out.list.push_back(Val::integer(d));
    return out;
  }
  OpBuilder &b = interp.getBuilder();
  bool isFull = call.name == "full";
  double fill = call.name == "ones" ? 1 : 0;
  Type element = b.getF32Type();
  if (isFull) {
    const Val *value = call.args.size() > 1 ? &call.args[1] : nullptr;
    std::optional<double> r = value ? value->getReal() : std::nullopt;
    if (!r)
      return interp.error(call.loc)
             << "torch::full needs a constant fill value";
    fill = *r;
    // ATen infers full's dtype from the fill value.
    if (value->kind == Val::Kind::Int)
      element = value->isBool ? Type(b.getI1Type()) : Type(b.getI64Type());
  }
  FailureOr<Type> dtype = dtypeArg(interp, call, isFull ? 2 : 1);
  if (failed(dtype))
    return failure();
  if (*dtype)
    element = *dtype;
  for (int64_t d : shape)
    if (d < 0)
      return interp.error(call.loc)
             << "'" << call.name << "': negative dimension " << d;
  return Val::ofTensor(
      makeConstant(b, call.loc, RankedTensorType::get(shape, element), {fill}));
}

/// torch::triu / torch::tril (and the methods) of a constant tensor: a
/// causal mask. Folded into a new constant.
static FunctionConverter triangle(bool upper) {
  return [upper](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
    FailureOr<Value> x = interp.tensorArg(call, 0);
    FailureOr<int64_t> diagonal = intArg(interp, call, 1, 0);
    if (failed(x) || failed(diagonal))
      return failure();
    ArrayRef<int64_t> s = shapeOf(*x);
    int64_t numel = 1;
    for (int64_t d : s)
      numel *= d;
    std::optional<std::vector<double>> values = constantValues(*x);
    if (!values || s.size() < 2 || numel > kMaxFoldedElements)
      return interp.error(call.loc)
             << "'" << call.name
             << "' is modelled on constant tensors of rank >= 2 (a causal "
                "mask built from torch::ones / torch::full in forward()), "
                "up to "
             << kMaxFoldedElements << " elements";
    int64_t rows = s[s.size() - 2], cols = s.back();
    std::vector<double> out(numel);
    for (int64_t k = 0; k < numel; ++k) {
      double v = values->size() == 1 ? (*values)[0] : (*values)[k];
      int64_t c = k % cols, r = (k / cols) % rows;
      bool keep = upper ? c - r >= *diagonal : c - r <= *diagonal;
      out[k] = keep ? v : 0;
    }
    return Val::ofTensor(makeConstant(interp.getBuilder(), call.loc,
                                      cast<RankedTensorType>(x->getType()),
                                      out));
  };
}

/// Tensor::to(dtype) / to(device): the tensor itself when nothing changes
/// (as LibTorch returns it), a folded constant, or a floating-point cast.
static FailureOr<Val> convertTo(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  if (failed(x))
    return failure();
  if (isDeviceArg(call, 1))
    return Val::ofTensor(*x);
  FailureOr<Type> dtype = dtypeArg(interp, call, 1);
  if (failed(dtype))
    return failure();
  if (!*dtype || *dtype == elementTypeOf(*x))
    return Val::ofTensor(*x);
  OpBuilder &b = interp.getBuilder();
  auto type = RankedTensorType::get(shapeOf(*x), *dtype);
  if (std::optional<std::vector<double>> values = constantValues(*x))
    return Val::ofTensor(makeConstant(b, call.loc, type, *values));
  if (isa<FloatType>(elementTypeOf(*x)) && isa<FloatType>(*dtype))
    return Val::ofTensor(nn::CastOp::create(b, call.loc, type, *x));
  return interp.error(call.loc)
         << "'to': converting a computed " << x->getType() << " to " << *dtype
         << " is not modelled (floating-point casts and constants are)";
}

static FailureOr<Val> maskedFill(Interpreter &interp, CallInfo &call,
                                 bool inplace) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  FailureOr<Value> mask = interp.tensorArg(call, 1);
  if (failed(x) || failed(mask))
    return failure();
  std::optional<double> value =
      call.args.size() > 2 ? call.args[2].getReal() : std::nullopt;
  if (!value)
    return interp.error(call.loc)
           << "'" << call.name << "' needs a constant fill value";
  if (!elementTypeOf(*mask).isInteger(1))
    return interp.error(call.loc)
           << "'" << call.name << "' expects a bool mask, got "
           << mask->getType();
  if (!broadcastable(shapeOf(*x), shapeOf(*mask)) ||
      shapeOf(*mask).size() > shapeOf(*x).size())
    return interp.error(call.loc)
           << "'" << call.name << "': the mask " << shapeString(shapeOf(*mask))
           << " does not broadcast to " << shapeString(shapeOf(*x));
  return Val::ofTensor(
      nn::MaskedFillOp::create(interp.getBuilder(), call.loc, *x, *mask,
                               llvm::APFloat(*value), inplace));
}

/// torch::matmul (rank >= 2, batch dimensions broadcast) and torch::bmm.
static FailureOr<Val> matmul(Interpreter &interp, CallInfo &call,
                             bool batched) {
  FailureOr<Value> a = interp.tensorArg(call, 0);
  FailureOr<Value> c = interp.tensorArg(call, 1);
  if (failed(a) || failed(c))
    return failure();
  ArrayRef<int64_t> x = shapeOf(*a), y = shapeOf(*c);
  bool ok = x.size() >= 2 && y.size() >= 2 && x.back() == y[y.size() - 2] &&
            broadcastable(x.drop_back(2), y.drop_back(2));
  if (batched)
    ok &= x.size() == 3 && y.size() == 3 && x[0] == y[0];
  if (!ok)
    return interp.error(call.loc)
           << "'" << call.name << "': shapes " << shapeString(x) << " and "
           << shapeString(y)
           << (batched ? " are not [B, n, m] and [B, m, p]"
                       : " cannot be multiplied (rank >= 2 is modelled)");
  OpBuilder &b = interp.getBuilder();
  if (batched)
    return Val::ofTensor(nn::BmmOp::create(b, call.loc, *a, *c));
  return Val::ofTensor(nn::MatmulOp::create(b, call.loc, *a, *c));
}

/// Tensor::chunk(n, dim): views (slices), the last one shorter when the
/// size does not divide.
static FailureOr<Val> chunk(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  FailureOr<int64_t> n = intArg(interp, call, 1);
  FailureOr<int64_t> dim = intArg(interp, call, 2, 0);
  if (failed(x) || failed(n) || failed(dim))
    return failure();
  int64_t rank = shapeOf(*x).size();
  int64_t d = normalizeDim(*dim, rank);
  if (*n <= 0 || d < 0 || d >= rank)
    return interp.error(call.loc) << "'chunk': invalid chunks or dimension";
  int64_t size = shapeOf(*x)[d];
  int64_t step = (size + *n - 1) / *n;
  SmallVector<int64_t> sizes;
  for (int64_t start = 0; start < size; start += step)
    sizes.push_back(std::min(size, start + step) - start);
  if (sizes.empty())
    sizes.push_back(0);
  // Views whose gradients one backward node (SplitBackward) concatenates.
  auto split = nn::SplitOp::create(interp.getBuilder(), call.loc, *x, d, sizes,
                                   /*squeeze=*/false);
  Val out;
  out.kind = Val::Kind::List;
  for (Value piece : split.getResults())
    out.list.push_back(Val::ofTensor(piece));
  return out;
}

/// The declared name of argument `index` of the overload the call picked
/// (a Tensor method's argument 0 is the object), or "".
static StringRef declaredArgName(CallInfo &call, unsigned index) {
  const clang::FunctionDecl *fn = nullptr;
  unsigned param = index;
  if (auto *member = dyn_cast<clang::CXXMemberCallExpr>(call.expr)) {
    fn = member->getMethodDecl();
    if (index == 0)
      return "";
    param = index - 1;
  } else if (auto *callExpr = dyn_cast<clang::CallExpr>(call.expr)) {
    fn = callExpr->getDirectCallee();
  }
  if (!fn || param >= fn->getNumParams() ||
      !fn->getParamDecl(param)->getDeclName().isIdentifier())
    return "";
  return fn->getParamDecl(param)->getName();
}

/// Argument `index` as reduced dimensions, normalized: an integer or a
/// list of them; every dimension when absent or when the overload has no
/// dimensions there (`x.sum()` is sum(dtype)).
static FailureOr<SmallVector<int64_t>> reducedDimsArg(Interpreter &interp,
                                                      CallInfo &call,
                                                      unsigned index,
                                                      int64_t rank) {
  if (index >= call.args.size() || call.args[index].kind == Val::Kind::None ||
      declaredArgName(call, index) != "dim")
    return llvm::to_vector(llvm::seq<int64_t>(0, rank));
  const Val &v = call.args[index];
  SmallVector<int64_t> dims;
  if (std::optional<int64_t> d = v.getInt())
    dims.push_back(*d);
  else if (std::optional<SmallVector<int64_t>> ds = v.getInts())
    dims = *ds;
  else
    return interp.error(call.loc)
           << "argument " << index << " of '" << call.name << "' is "
           << v.describe() << ", not constant dimensions";
  for (int64_t &d : dims) {
    int64_t n = normalizeDim(d, rank);
    if (n < 0 || n >= rank)
      return interp.error(call.loc) << "'" << call.name << "': dimension " << d
                                    << " of a rank-" << rank << " tensor";
    d = n;
  }
  return dims;
}

/// x.sum(dims, keepdim) / x.mean(...) / x.amax(...) / x.amin(...)
/// (torch::sum, ...): nn.sum, nn.mean, nn.amax, nn.amin; without dims,
/// over every dimension. The dtype argument is not
/// read (the interpreter gives the defaulted optional as an integer, as for
/// softmax).
template <typename OpTy>
static FailureOr<Val> reduction(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  if (failed(x))
    return failure();
  FailureOr<SmallVector<int64_t>> dims =
      reducedDimsArg(interp, call, 1, shapeOf(*x).size());
  FailureOr<int64_t> keepdim =
      declaredArgName(call, 2) == "keepdim" ? intArg(interp, call, 2, 0) : 0;
  if (failed(dims) || failed(keepdim))
    return failure();
  return Val::ofTensor(
      OpTy::create(interp.getBuilder(), call.loc, *x, *dims, *keepdim != 0));
}

/// x.topk(k, dim, largest, sorted): {values, indices} (nn.topk, of the k
/// smallest with largest=false).
static FailureOr<Val> topk(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  FailureOr<int64_t> k = intArg(interp, call, 1),
                     dim = intArg(interp, call, 2, -1),
                     largest = intArg(interp, call, 3, 1);
  if (failed(x) || failed(k) || failed(dim) || failed(largest))
    return failure();
  int64_t rank = shapeOf(*x).size(), d = normalizeDim(*dim, rank);
  if (d < 0 || d >= rank || *k < 1 || *k > shapeOf(*x)[d])
    return interp.error(call.loc) << "'topk': k = " << *k << " along dimension "
                                  << *dim << " of a rank-" << rank << " tensor";
  auto op = nn::TopkOp::create(interp.getBuilder(), call.loc, *x, *k, d,
                               /*smallest=*/*largest == 0);
  Val out;
  out.kind = Val::Kind::List;
  out.list = {Val::ofTensor(op.getValues()), Val::ofTensor(op.getIndices())};
  return out;
}

/// x.max(dim, keepdim) (x.min): {values, indices}, which autograd handles
/// as topk's k = 1 (value_selecting_reduction_backward keeps the indices):
/// nn.topk, viewed without the dimension unless keepdim. x.max() over
/// every element: nn.amax {evenly} of every dimension (MaxBackward1 keeps
/// the input and the result, as amax's backward).
template <bool Smallest>
static FailureOr<Val> maxDim(Interpreter &interp, CallInfo &call) {
  StringRef name = Smallest ? "min" : "max";
  FailureOr<Value> x = interp.tensorArg(call, 0);
  if (failed(x))
    return failure();
  if (call.args.size() < 2) {
    SmallVector<int64_t> every =
        llvm::to_vector(llvm::seq<int64_t>(0, shapeOf(*x).size()));
    if (Smallest)
      return Val::ofTensor(nn::AminOp::create(interp.getBuilder(), call.loc, *x,
                                              every, false,
                                              /*evenly=*/true));
    return Val::ofTensor(nn::AmaxOp::create(interp.getBuilder(), call.loc, *x,
                                            every, false, /*evenly=*/true));
  }
  if (call.args[1].kind == Val::Kind::Tensor)
    return interp.error(call.loc)
           << "'" << name << "' of two tensors is not modelled; " << name
           << "(dim) and " << name << "() are";
  FailureOr<int64_t> dim = intArg(interp, call, 1),
                     keepdim = intArg(interp, call, 2, 0);
  if (failed(dim) || failed(keepdim))
    return failure();
  int64_t rank = shapeOf(*x).size(), d = normalizeDim(*dim, rank);
  if (d < 0 || d >= rank)
    return interp.error(call.loc) << "'" << name << "': dimension " << *dim
                                  << " of a rank-" << rank << " tensor";
  OpBuilder &b = interp.getBuilder();
  auto op = nn::TopkOp::create(b, call.loc, *x, int64_t(1), d, Smallest);
  Val out;
  out.kind = Val::Kind::List;
  for (Value v : op.getResults()) {
    if (!*keepdim) {
      auto type = cast<RankedTensorType>(v.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape.erase(shape.begin() + d);
      v = nn::ReshapeOp::create(
          b, call.loc, RankedTensorType::get(shape, type.getElementType()), v);
    }
    out.list.push_back(Val::ofTensor(v));
  }
  return out;
}

static FailureOr<Val> unsqueeze(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  FailureOr<int64_t> dim = intArg(interp, call, 1);
  if (failed(x) || failed(dim))
    return failure();
  SmallVector<int64_t> shape(shapeOf(*x));
  int64_t d = *dim < 0 ? *dim + int64_t(shape.size()) + 1 : *dim;
  if (d < 0 || d > int64_t(shape.size()))
    return interp.error(call.loc) << "'unsqueeze': dimension out of range";
  shape.insert(shape.begin() + d, 1);
  return Val::ofTensor(reshapeTo(interp.getBuilder(), call.loc, *x, shape));
}

/// x.select(dim, index): the row as a view (a slice viewed without `dim`).
static FailureOr<Val> selectRow(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  FailureOr<int64_t> dim = intArg(interp, call, 1),
                     index = intArg(interp, call, 2);
  if (failed(x) || failed(dim) || failed(index))
    return failure();
  SmallVector<int64_t> shape(shapeOf(*x));
  int64_t rank = shape.size();
  int64_t d = normalizeDim(*dim, rank);
  if (d < 0 || d >= rank)
    return interp.error(call.loc) << "'select': dimension " << *dim
                                  << " out of range for rank " << rank;
  int64_t i = *index < 0 ? *index + shape[d] : *index;
  if (i < 0 || i >= shape[d])
    return interp.error(call.loc) << "'select': index " << *index
                                  << " out of range for size " << shape[d];
  OpBuilder &b = interp.getBuilder();
  SmallVector<int64_t> row(shape);
  row[d] = 1;
  Value slice =
      nn::SliceOp::create(b, call.loc, withShape(*x, row), *x, d, i, i + 1, 1);
  shape.erase(shape.begin() + d);
  return Val::ofTensor(reshapeTo(b, call.loc, slice, shape));
}

static FailureOr<Val> permute(Interpreter &interp, CallInfo &call) {
  FailureOr<Value> x = interp.tensorArg(call, 0);
  if (failed(x))
    return failure();
  SmallVector<Val> dims;
  if (call.args.size() == 2 && call.args[1].kind == Val::Kind::List)
    dims.assign(call.args[1].list.begin(), call.args[1].list.end());
  else
    dims.assign(call.args.begin() + 1, call.args.end());
  int64_t rank = shapeOf(*x).size();
  SmallVector<int64_t> order;
  SmallVector<bool> seen(rank, false);
  for (const Val &d : dims) {
    std::optional<int64_t> v = d.getInt();
    int64_t k = v ? normalizeDim(*v, rank) : -1;
    if (k < 0 || k >= rank || seen[k])
      return interp.error(call.loc)
             << "'permute': dimensions are not a constant permutation";
    seen[k] = true;
    order.push_back(k);
  }
  if (int64_t(order.size()) != rank)
    return interp.error(call.loc)
           << "'permute' needs " << rank << " dimensions";
  return Val::ofTensor(
      nn::PermuteOp::create(interp.getBuilder(), call.loc, *x, order));
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
    for (StringRef name : {"randn", "rand", "zeros", "ones", "empty", "full"})
      t[name] = factory;
    t["triu"] = triangle(/*upper=*/true);
    t["tril"] = triangle(/*upper=*/false);
    t["matmul"] = [](Interpreter &interp, CallInfo &call) {
      return matmul(interp, call, /*batched=*/false);
    };
    t["bmm"] = [](Interpreter &interp, CallInfo &call) {
      return matmul(interp, call, /*batched=*/true);
    };
    t["masked_fill"] = [](Interpreter &interp, CallInfo &call) {
      return maskedFill(interp, call, /*inplace=*/false);
    };
    t["unsqueeze"] = unsqueeze;
    t["permute"] = permute;
    t["chunk"] = chunk;
    t["sum"] = reduction<nn::SumOp>;
    t["mean"] = reduction<nn::MeanOp>;
    t["topk"] = topk;
    t["max"] = maxDim</*Smallest=*/false>;
    t["min"] = maxDim</*Smallest=*/true>;
    t["amax"] = reduction<nn::AmaxOp>;
    t["amin"] = reduction<nn::AminOp>;
    // torch::dtype(torch::kBool): TensorOptions with a dtype.
    t["dtype"] = [](Interpreter &interp, CallInfo &call) -> FailureOr<Val> {
      Val out;
      out.kind = Val::Kind::Options;
      out.options = std::make_shared<OptionsObject>();
      if (!call.args.empty())
        out.options->fields["dtype"] = call.args[0];
      return out;
    };
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
    t["matmul"] = [](Interpreter &interp, CallInfo &call) {
      return matmul(interp, call, /*batched=*/false);
    };
    t["bmm"] = [](Interpreter &interp, CallInfo &call) {
      return matmul(interp, call, /*batched=*/true);
    };
    t["masked_fill"] = [](Interpreter &interp, CallInfo &call) {
      return maskedFill(interp, call, /*inplace=*/false);
    };
    t["masked_fill_"] = [](Interpreter &interp, CallInfo &call) {
      return maskedFill(interp, call, /*inplace=*/true);
    };
    t["triu"] = triangle(/*upper=*/true);
    t["tril"] = triangle(/*upper=*/false);
    t["to"] = convertTo;
    t["contiguous"] = [](Interpreter &interp,
                         CallInfo &call) -> FailureOr<Val> {
      FailureOr<Value> x = interp.tensorArg(call, 0);
      if (failed(x))
        return failure();
      return Val::ofTensor(makeContiguous(interp.getBuilder(), call.loc, *x));
    };
    t["unsqueeze"] = unsqueeze;
    t["permute"] = permute;
    t["chunk"] = chunk;
    t["sum"] = reduction<nn::SumOp>;
    t["mean"] = reduction<nn::MeanOp>;
    t["topk"] = topk;
    t["max"] = maxDim</*Smallest=*/false>;
    t["min"] = maxDim</*Smallest=*/true>;
    t["amax"] = reduction<nn::AmaxOp>;
    t["amin"] = reduction<nn::AminOp>;
    t["view"] = reshape;
    t["reshape"] = reshape;
    t["select"] = selectRow;
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
