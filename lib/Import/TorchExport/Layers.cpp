//===- Layers.cpp - convolution, linear, norms, pooling, attention --------===//
//
// ATen's layer ops map one to one onto nn ops with the same arguments; what
// they keep for backward is the nn op's (derivatives.yaml of the release).
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

#include "vram/Dialect/NN/Recurrent.h"
#include "vram/Dialect/NN/TorchSemantics.h"
#include "vram/Support/Findings.h"

using namespace mlir;
using namespace vram;
using namespace vram::torch_export;

/// A 2-element int[2] from a schema list of one or two (PyTorch's
/// _pair()).
static FailureOr<SmallVector<int64_t>>
pair(NodeBinder &op, llvm::StringRef name, ArrayRef<int64_t> fallback) {
  FailureOr<SmallVector<int64_t>> v = op.integers(name, fallback);
  if (failed(v))
    return failure();
  if (v->size() == 1)
    v->push_back(v->front());
  if (v->size() != 2)
    return op.error() << "argument '" << name << "' must hold 1 or 2 ints";
  return v;
}

static LogicalResult convertConv2d(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("input"), w = op.tensor("weight"),
                   bias = op.optionalTensor("bias");
  FailureOr<SmallVector<int64_t>> strides = pair(op, "stride", {1, 1}),
                                  padding = pair(op, "padding", {0, 0}),
                                  dilation = pair(op, "dilation", {1, 1});
  FailureOr<int64_t> groups = op.integer("groups", 1);
  if (failed(x) || failed(w) || failed(bias) || failed(strides) ||
      failed(padding) || failed(dilation) || failed(groups))
    return failure();
  FailureOr<Value> y = op.make<nn::Conv2dOp>(
      *x, *w, *bias, b.getDenseI64ArrayAttr(*strides),
      b.getDenseI64ArrayAttr(*padding), b.getDenseI64ArrayAttr(*dilation),
      b.getI64IntegerAttr(*groups));
  return failed(y) ? failure() : op.setResult(*y);
}

/// One int from a schema int[1] (PyTorch's _single()).
static FailureOr<int64_t> single(NodeBinder &op, llvm::StringRef name,
                                 int64_t fallback) {
  FailureOr<SmallVector<int64_t>> v =
      op.integers(name, ArrayRef<int64_t>{fallback});
  if (failed(v))
    return failure();
  if (v->size() != 1)
    return op.error() << "argument '" << name << "' must hold 1 int";
  return v->front();
}

/// conv1d as ATen runs it: input [N, C, L] and weight [F, C / groups, K]
/// viewed with a unit height ([N, C, 1, L], [F, C / groups, 1, K]), a 2-D
/// convolution, the output viewed back to [N, F, L'] (view1d_as_2d in
/// Convolution.cpp). The views share their tensors' storage, so the bytes
/// kept are conv1d's: its input and weight.
static LogicalResult convertConv1d(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("input"), w = op.tensor("weight"),
                   bias = op.optionalTensor("bias");
  FailureOr<int64_t> stride = single(op, "stride", 1),
                     padding = single(op, "padding", 0),
                     dilation = single(op, "dilation", 1),
                     groups = op.integer("groups", 1);
  if (failed(x) || failed(w) || failed(bias) || failed(stride) ||
      failed(padding) || failed(dilation) || failed(groups))
    return failure();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x->getType()).getShape(),
                    ws = cast<RankedTensorType>(w->getType()).getShape();
  if (xs.size() != 3 || ws.size() != 3)
    return op.error() << "conv1d expects a 3-D input and weight, got "
                      << x->getType() << " and " << w->getType();
  FailureOr<Value> x4 = op.reshape(*x, {xs[0], xs[1], 1, xs[2]});
  FailureOr<Value> w4 = op.reshape(*w, {ws[0], ws[1], 1, ws[2]});
  if (failed(x4) || failed(w4))
    return failure();
  FailureOr<Value> y = op.make<nn::Conv2dOp>(
      *x4, *w4, *bias, b.getDenseI64ArrayAttr({1, *stride}),
      b.getDenseI64ArrayAttr({0, *padding}),
      b.getDenseI64ArrayAttr({1, *dilation}), b.getI64IntegerAttr(*groups));
  if (failed(y))
    return failure();
  ArrayRef<int64_t> ys = cast<RankedTensorType>(y->getType()).getShape();
  FailureOr<Value> y3 = op.reshape(*y, {ys[0], ys[1], ys[3]});
  return failed(y3) ? failure() : op.setResult(*y3);
}

static LogicalResult convertConvTranspose2d(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("input"), w = op.tensor("weight"),
                   bias = op.optionalTensor("bias");
  FailureOr<SmallVector<int64_t>> strides = pair(op, "stride", {1, 1}),
                                  padding = pair(op, "padding", {0, 0}),
                                  outputPadding =
                                      pair(op, "output_padding", {0, 0}),
                                  dilation = pair(op, "dilation", {1, 1});
  FailureOr<int64_t> groups = op.integer("groups", 1);
  if (failed(x) || failed(w) || failed(bias) || failed(strides) ||
      failed(padding) || failed(outputPadding) || failed(dilation) ||
      failed(groups))
    return failure();
  FailureOr<Value> y = op.make<nn::ConvTranspose2dOp>(
      *x, *w, *bias, b.getDenseI64ArrayAttr(*strides),
      b.getDenseI64ArrayAttr(*padding), b.getDenseI64ArrayAttr(*outputPadding),
      b.getDenseI64ArrayAttr(*dilation), b.getI64IntegerAttr(*groups));
  return failed(y) ? failure() : op.setResult(*y);
}

/// The type a resize of NCHW `x` gives: the archive's result, its N and C
/// the input's.
static FailureOr<RankedTensorType> resizedType(NodeBinder &op, Value x) {
  FailureOr<RankedTensorType> type = op.resultType();
  if (failed(type))
    return failure();
  auto in = cast<RankedTensorType>(x.getType());
  if (in.getRank() != 4 || type->getRank() != 4 ||
      type->getShape().take_front(2) != in.getShape().take_front(2))
    return op.error() << "expects NCHW " << in << " resized to " << *type;
  return type;
}

/// upsample_nearest2d with an output size or scale factors: the output's
/// size is the archive's (floor(in * scale), as PyTorch computes it).
static LogicalResult convertUpsampleNearest2d(NodeBinder &op) {
  FailureOr<Value> x = op.tensor(op.has("self") ? "self" : "input");
  if (failed(x))
    return failure();
  for (llvm::StringRef name :
       {"output_size", "scale_factors", "scales_h", "scales_w"})
    op.ignore(name);
  FailureOr<RankedTensorType> type = resizedType(op, *x);
  if (failed(type))
    return failure();
  return op.setResult(
      nn::UpsampleNearest2dOp::create(op.getBuilder(), op.getLoc(), *type, *x));
}

/// upsample_bilinear2d with an output size or scale factors (.vec), or a
/// size and per-axis scales (.default): the output's size is the
/// archive's; the scale factors, when given, set the source positions
/// (PyTorch uses 1 / factor, not in / out).
static LogicalResult convertUpsampleBilinear2d(NodeBinder &op) {
  FailureOr<Value> x = op.tensor(op.has("self") ? "self" : "input");
  FailureOr<bool> align = op.boolean("align_corners");
  if (failed(x) || failed(align))
    return failure();
  op.ignore("output_size");
  std::optional<SmallVector<double>> scales;
  if (op.has("scale_factors")) {
    FailureOr<std::optional<SmallVector<double>>> factors =
        op.optionalReals("scale_factors");
    if (failed(factors))
      return failure();
    scales = *factors;
  } else {
    SmallVector<double> hw;
    for (StringRef name : {"scales_h", "scales_w"})
      if (op.has(name)) {
        FailureOr<double> s = op.real(name, -1.0);
        if (failed(s))
          return failure();
        hw.push_back(*s);
      }
    // PyTorch reads a missing or non-positive scale as in / out.
    if (hw.size() == 2 && hw[0] > 0 && hw[1] > 0)
      scales = hw;
  }
  if (scales && scales->size() != 2)
    return op.error() << "expects 2 scale factors, got " << scales->size();
  if (scales && llvm::any_of(*scales, [](double s) { return !(s > 0); }))
    return op.error() << "scale factors must be positive";
  FailureOr<RankedTensorType> type = resizedType(op, *x);
  if (failed(type))
    return failure();
  OpBuilder &b = op.getBuilder();
  return op.setResult(nn::UpsampleBilinear2dOp::create(
      b, op.getLoc(), *type, *x, *align,
      scales ? b.getDenseF64ArrayAttr(*scales) : DenseF64ArrayAttr()));
}

static LogicalResult convertLinear(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("input"), w = op.tensor("weight"),
                   bias = op.optionalTensor("bias");
  if (failed(x) || failed(w) || failed(bias))
    return failure();
  FailureOr<Value> y = op.make<nn::LinearOp>(*x, *w, *bias);
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertBatchNorm(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("input"), w = op.optionalTensor("weight"),
                   bias = op.optionalTensor("bias"),
                   mean = op.optionalTensor("running_mean"),
                   var = op.optionalTensor("running_var");
  FailureOr<bool> training = op.boolean("training");
  FailureOr<double> momentum = op.real("momentum", 0.1),
                    eps = op.real("eps", 1e-5);
  // Which kernel runs is the device's choice, not the graph's.
  op.ignore("cudnn_enabled");
  if (failed(x) || failed(w) || failed(bias) || failed(mean) || failed(var) ||
      failed(training) || failed(momentum) || failed(eps))
    return failure();
  // The step's mode decides how batch_norm runs (nn.batch_norm): a program
  // exported in eval mode used the running statistics instead.
  if (!*training)
    emitFinding(op.getLoc(), rules::kInferenceExport)
        << "batch_norm was exported in eval mode (training=False); the "
           "training step runs it in training mode: export model.train()";
  FailureOr<Value> y = op.make<nn::BatchNormOp>(*x, *w, *bias, *mean, *var,
                                                b.getF64FloatAttr(*eps),
                                                b.getF64FloatAttr(*momentum));
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertLayerNorm(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("input"), w = op.optionalTensor("weight"),
                   bias = op.optionalTensor("bias");
  FailureOr<SmallVector<int64_t>> shape = op.integers("normalized_shape");
  FailureOr<double> eps = op.real("eps", 1e-5);
  op.ignore("cudnn_enable");
  if (failed(x) || failed(w) || failed(bias) || failed(shape) || failed(eps))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  if (shape->empty() || (int64_t)shape->size() > xt.getRank() ||
      ArrayRef<int64_t>(*shape) != xt.getShape().take_back(shape->size()))
    return op.error() << "normalized_shape does not end the input's shape "
                      << xt;
  FailureOr<Value> y = op.make<nn::LayerNormOp>(
      *x, *w, *bias, b.getI64IntegerAttr(shape->size()),
      b.getF64FloatAttr(*eps));
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertGroupNorm(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("input"), w = op.optionalTensor("weight"),
                   bias = op.optionalTensor("bias");
  FailureOr<int64_t> groups = op.integer("num_groups");
  FailureOr<double> eps = op.real("eps", 1e-5);
  op.ignore("cudnn_enabled");
  if (failed(x) || failed(w) || failed(bias) || failed(groups) || failed(eps))
    return failure();
  FailureOr<Value> y = op.make<nn::GroupNormOp>(
      *x, *w, *bias, b.getI64IntegerAttr(*groups), b.getF64FloatAttr(*eps));
  return failed(y) ? failure() : op.setResult(*y);
}

/// instance_norm (nn.InstanceNorm1d/2d/3d): statistics per sample and
/// channel, nn.group_norm with one group per channel and `instance` (the
/// repeated weight batch_norm keeps). Running statistics
/// (track_running_stats) are not modelled: batch_norm would also keep
/// their per-sample repeats.
static LogicalResult convertInstanceNorm(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("input"), w = op.optionalTensor("weight"),
                   bias = op.optionalTensor("bias"),
                   mean = op.optionalTensor("running_mean"),
                   var = op.optionalTensor("running_var");
  FailureOr<bool> inputStats = op.boolean("use_input_stats");
  FailureOr<double> eps = op.real("eps", 1e-5);
  op.ignore("momentum");
  op.ignore("cudnn_enabled");
  if (failed(x) || failed(w) || failed(bias) || failed(mean) || failed(var) ||
      failed(inputStats) || failed(eps))
    return failure();
  if (*mean || *var || !*inputStats)
    return op.error() << "instance_norm with running statistics "
                         "(track_running_stats=True) is not modelled yet";
  auto xt = cast<RankedTensorType>(x->getType());
  if (xt.getRank() < 3)
    return op.error() << "instance_norm expects an [N, C, ...] input, got "
                      << xt;
  FailureOr<Value> y = op.make<nn::GroupNormOp>(
      *x, *w, *bias, b.getI64IntegerAttr(xt.getDimSize(1)),
      b.getF64FloatAttr(*eps), b.getUnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertMaxPool2d(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> x = op.tensor("self");
  FailureOr<SmallVector<int64_t>> kernel = pair(op, "kernel_size", {});
  if (failed(x) || failed(kernel))
    return failure();
  // stride=[] means the kernel size.
  FailureOr<SmallVector<int64_t>> strides =
      op.integers("stride", ArrayRef<int64_t>());
  if (failed(strides))
    return failure();
  if (strides->empty())
    *strides = *kernel;
  else if (strides->size() == 1)
    strides->push_back(strides->front());
  FailureOr<SmallVector<int64_t>> padding = pair(op, "padding", {0, 0}),
                                  dilation = pair(op, "dilation", {1, 1});
  FailureOr<bool> ceil = op.boolean("ceil_mode", false);
  if (failed(padding) || failed(dilation) || failed(ceil))
    return failure();
  if (strides->size() != 2)
    return op.error() << "argument 'stride' must hold 1 or 2 ints";
  FailureOr<Value> y = op.make<nn::MaxPool2dOp>(
      *x, b.getDenseI64ArrayAttr(*kernel), b.getDenseI64ArrayAttr(*strides),
      b.getDenseI64ArrayAttr(*padding), b.getDenseI64ArrayAttr(*dilation),
      *ceil ? b.getUnitAttr() : UnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertAdaptiveAvgPool2d(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("self");
  FailureOr<SmallVector<int64_t>> size = pair(op, "output_size", {});
  if (failed(x) || failed(size))
    return failure();
  FailureOr<Value> y = op.make<nn::AdaptiveAvgPool2dOp>(
      *x, op.getBuilder().getDenseI64ArrayAttr(*size));
  return failed(y) ? failure() : op.setResult(*y);
}

/// dropout and dropout_ (nn.Dropout(inplace=True)).
template <bool Inplace> static LogicalResult convertDropout(NodeBinder &op) {
  FailureOr<Value> x = op.tensor(Inplace ? "self" : "input");
  FailureOr<double> p = op.real("p");
  FailureOr<bool> train = op.boolean("train");
  if (failed(x) || failed(p) || failed(train))
    return failure();
  // dropout(train=False) returns its input.
  if (!*train || *p == 0)
    return op.setResult(*x);
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> y = op.make<nn::DropoutOp>(
      *x, b.getF64FloatAttr(*p), Inplace ? b.getUnitAttr() : UnitAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertScaledDotProductAttention(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> q = op.tensor("query"), k = op.tensor("key"),
                   v = op.tensor("value"),
                   mask = op.optionalTensor("attn_mask");
  FailureOr<double> dropout = op.real("dropout_p", 0.0);
  FailureOr<bool> causal = op.boolean("is_causal", false),
                  gqa = op.boolean("enable_gqa", false);
  if (failed(q) || failed(k) || failed(v) || failed(mask) || failed(dropout) ||
      failed(causal) || failed(gqa))
    return failure();
  FloatAttr scale;
  if (op.has("scale")) {
    FailureOr<double> s = op.real("scale");
    if (failed(s))
      return failure();
    scale = b.getF64FloatAttr(*s);
  }
  Type elementType = cast<RankedTensorType>(q->getType()).getElementType();
  nn::AttentionBackend backend =
      nn::getSdpaBackend(op.getTorchTarget(), elementType, *dropout,
                         /*hasMask=*/bool(*mask));
  FailureOr<Value> y = op.make<nn::ScaledDotProductAttentionOp>(
      *q, *k, *v, *mask, *causal ? b.getUnitAttr() : UnitAttr(),
      nn::AttentionBackendAttr::get(op.getContext(), backend), scale,
      *gqa ? b.getUnitAttr() : UnitAttr(), b.getF64FloatAttr(*dropout));
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertEmbedding(NodeBinder &op) {
  OpBuilder &b = op.getBuilder();
  FailureOr<Value> w = op.tensor("weight"), ids = op.tensor("indices");
  FailureOr<int64_t> paddingIdx = op.integer("padding_idx", -1);
  FailureOr<bool> scaleByFreq = op.boolean("scale_grad_by_freq", false),
                  sparse = op.boolean("sparse", false);
  if (failed(w) || failed(ids) || failed(paddingIdx) || failed(scaleByFreq) ||
      failed(sparse))
    return failure();
  if (*sparse)
    return op.error() << "sparse embedding gradients are not modelled";
  FailureOr<Value> y = op.make<nn::EmbeddingOp>(
      *w, *ids,
      *paddingIdx >= 0 ? b.getI64IntegerAttr(*paddingIdx) : IntegerAttr());
  return failed(y) ? failure() : op.setResult(*y);
}

/// addmm(bias, x, W) = x @ W + bias: transformers' Conv1D (GPT-2), whose
/// weight is [in, out]; as nn.linear over the weight's transpose (a view).
static LogicalResult convertAddmm(NodeBinder &op) {
  FailureOr<Value> bias = op.tensor("self"), x = op.tensor("mat1"),
                   w = op.tensor("mat2");
  FailureOr<double> beta = op.real("beta", 1.0), alpha = op.real("alpha", 1.0);
  if (failed(bias) || failed(x) || failed(w) || failed(beta) || failed(alpha))
    return failure();
  if (*beta != 1 || *alpha != 1)
    return op.error() << "only beta=1, alpha=1 is modelled";
  if (cast<RankedTensorType>(w->getType()).getRank() != 2 ||
      cast<RankedTensorType>(bias->getType()).getRank() != 1)
    return op.error() << "expects a 2-D mat2 and a 1-D bias";
  FailureOr<Value> wt =
      op.make<nn::PermuteOp>(*w, op.getBuilder().getDenseI64ArrayAttr({1, 0}));
  if (failed(wt))
    return failure();
  FailureOr<Value> y = op.make<nn::LinearOp>(*x, *wt, *bias);
  return failed(y) ? failure() : op.setResult(*y);
}

static LogicalResult convertMatmul(NodeBinder &op) {
  FailureOr<Value> lhs = op.tensor("self"), rhs = op.tensor("other");
  if (failed(lhs) || failed(rhs))
    return failure();
  FailureOr<Value> y = op.make<nn::MatmulOp>(*lhs, *rhs);
  return failed(y) ? failure() : op.setResult(*y);
}

/// The configuration arguments aten.lstm.input and aten.gru.input share.
static FailureOr<nn::RnnConfig> rnnConfig(NodeBinder &op) {
  FailureOr<bool> hasBiases = op.boolean("has_biases"),
                  train = op.boolean("train"),
                  bidirectional = op.boolean("bidirectional"),
                  batchFirst = op.boolean("batch_first");
  FailureOr<int64_t> layers = op.integer("num_layers");
  FailureOr<double> dropout = op.real("dropout");
  if (failed(hasBiases) || failed(train) || failed(bidirectional) ||
      failed(batchFirst) || failed(layers) || failed(dropout))
    return failure();
  nn::RnnConfig config;
  config.numLayers = *layers;
  config.hasBiases = *hasBiases;
  config.bidirectional = *bidirectional;
  config.batchFirst = *batchFirst;
  config.dropout = *dropout;
  config.train = *train;
  return config;
}

/// aten.lstm.input (torch.nn.LSTM, batched, no projections): the stack of
/// nn.lstm_layer that PyTorch 2 runs on the CPU (Recurrent.h buildLstm).
static LogicalResult convertLstm(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("input");
  FailureOr<SmallVector<Value>> hx = op.tensors("hx"),
                                params = op.tensors("params");
  FailureOr<nn::RnnConfig> config = rnnConfig(op);
  if (failed(x) || failed(hx) || failed(params) || failed(config))
    return failure();
  if (hx->size() != 2)
    return op.error() << "expects hx = [h0, c0], got " << hx->size()
                      << " tensors";
  FailureOr<nn::RnnResults> lstm = nn::buildLstm(
      op.getBuilder(), op.getLoc(), *config, *x, (*hx)[0], (*hx)[1], *params);
  if (failed(lstm))
    return failure();
  return op.setResults({lstm->output, lstm->hy, lstm->cy});
}

/// aten.gru.input (torch.nn.GRU, batched): cell by cell as PyTorch runs it
/// on the CPU (Recurrent.h buildGru).
static LogicalResult convertGru(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("input"), hx = op.tensor("hx");
  FailureOr<SmallVector<Value>> params = op.tensors("params");
  FailureOr<nn::RnnConfig> config = rnnConfig(op);
  if (failed(x) || failed(hx) || failed(params) || failed(config))
    return failure();
  FailureOr<nn::RnnResults> gru =
      nn::buildGru(op.getBuilder(), op.getLoc(), *config, *x, *hx, *params);
  if (failed(gru))
    return failure();
  return op.setResults({gru->output, gru->hy});
}

/// aten.rnn_tanh.input / aten.rnn_relu.input (torch.nn.RNN, batched): cell
/// by cell as PyTorch runs it on the CPU (Recurrent.h buildSimpleRnn).
template <bool Relu> static LogicalResult convertSimpleRnn(NodeBinder &op) {
  FailureOr<Value> x = op.tensor("input"), hx = op.tensor("hx");
  FailureOr<SmallVector<Value>> params = op.tensors("params");
  FailureOr<nn::RnnConfig> config = rnnConfig(op);
  if (failed(x) || failed(hx) || failed(params) || failed(config))
    return failure();
  FailureOr<nn::RnnResults> rnn = nn::buildSimpleRnn(
      op.getBuilder(), op.getLoc(), *config, Relu, *x, *hx, *params);
  if (failed(rnn))
    return failure();
  return op.setResults({rnn->output, rnn->hy});
}

void vram::torch_export::registerLayerConverters(ConverterTable &table) {
  table.on("aten.conv1d.default", convertConv1d);
  table.on("aten.conv2d.default", convertConv2d);
  table.on("aten.conv_transpose2d.input", convertConvTranspose2d);
  table.on("aten.upsample_nearest2d.vec", convertUpsampleNearest2d);
  table.on("aten.upsample_nearest2d.default", convertUpsampleNearest2d);
  table.on("aten.upsample_bilinear2d.vec", convertUpsampleBilinear2d);
  table.on("aten.upsample_bilinear2d.default", convertUpsampleBilinear2d);
  table.on("aten.linear.default", convertLinear);
  table.on("aten.lstm.input", convertLstm);
  table.on("aten.gru.input", convertGru);
  table.on("aten.rnn_tanh.input", convertSimpleRnn<false>);
  table.on("aten.rnn_relu.input", convertSimpleRnn<true>);
  table.on("aten.batch_norm.default", convertBatchNorm);
  table.on("aten.layer_norm.default", convertLayerNorm);
  table.on("aten.group_norm.default", convertGroupNorm);
  table.on("aten.instance_norm.default", convertInstanceNorm);
  table.on("aten.max_pool2d.default", convertMaxPool2d);
  table.on("aten.adaptive_avg_pool2d.default", convertAdaptiveAvgPool2d);
  table.on("aten.dropout.default", convertDropout<false>);
  table.on("aten.dropout_.default", convertDropout<true>);
  table.on("aten.scaled_dot_product_attention.default",
           convertScaledDotProductAttention);
  table.on("aten.embedding.default", convertEmbedding);
  table.on("aten.matmul.default", convertMatmul);
  table.on("aten.addmm.default", convertAddmm);
}
