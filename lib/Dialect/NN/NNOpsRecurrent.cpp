//===- NNOpsRecurrent.cpp - torch.nn.LSTM as PyTorch 2 runs it on the CPU -===//
//
// PyTorch 2 runs an LSTM on the CPU as oneDNN's LSTM primitive, one call per
// layer and direction (mkldnn_rnn_layer, aten/src/ATen/native/mkldnn/
// RNN.cpp); derivatives.yaml keeps every input and output of the call and
// the primitive's workspace. The sizes oneDNN allocates come from
// TorchSemantics.h (getLstmLayerBuffers). The modules' builders for the
// front ends (Recurrent.h) are here too.
//
//===----------------------------------------------------------------------===//

#include "NNOpsDetail.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Dialect/NN/Recurrent.h"
#include "vram/Dialect/NN/TorchSemantics.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
using namespace vram::nn;
using namespace vram::nn::detail;

int64_t LstmLayerOp::getSeqLength() {
  return tensorOf(getInput()).getDimSize(0);
}
int64_t LstmLayerOp::getBatch() { return tensorOf(getInput()).getDimSize(1); }
int64_t LstmLayerOp::getInputSize() {
  return tensorOf(getInput()).getDimSize(2);
}
int64_t LstmLayerOp::getHiddenSize() { return tensorOf(getH()).getDimSize(1); }

LogicalResult LstmLayerOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &results) {
  auto x = cast<RankedTensorType>(adaptor.getInput().getType());
  auto h = cast<RankedTensorType>(adaptor.getH().getType());
  if (x.getRank() != 3)
    return emitOptionalError(loc, "expects an input [T, B, I], got ",
                             shapeStr(x.getShape()));
  if (h.getRank() != 2 || h.getDimSize(0) != x.getDimSize(1))
    return emitOptionalError(loc, "expects h [B, H] with B = ", x.getDimSize(1),
                             ", got ", shapeStr(h.getShape()));
  int64_t hidden = h.getDimSize(1), input = x.getDimSize(2);
  int64_t gates = satMul(4, hidden);
  Type et = x.getElementType();
  auto expect = [&](Value v, ArrayRef<int64_t> shape,
                    StringRef what) -> LogicalResult {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getShape() != shape || t.getElementType() != et)
      return emitOptionalError(loc, what, " must be ", shapeStr(shape),
                               " of the input's dtype, got ",
                               shapeStr(t.getShape()));
    return success();
  };
  if (failed(expect(adaptor.getC(), h.getShape(), "c")) ||
      failed(expect(adaptor.getH(), h.getShape(), "h")) ||
      failed(expect(adaptor.getWeightIh(), {gates, input}, "weight_ih")) ||
      failed(expect(adaptor.getWeightHh(), {gates, hidden}, "weight_hh")))
    return failure();
  for (Value bias : adaptor.getBiases())
    if (failed(expect(bias, {gates}, "a bias")))
      return failure();
  results.push_back(
      RankedTensorType::get({x.getDimSize(0), x.getDimSize(1), hidden}, et));
  results.push_back(h);
  results.push_back(h);
  return success();
}

LogicalResult LstmLayerOp::verify() {
  if (!getBiases().empty() && getBiases().size() != 2)
    return emitOpError("takes bias_ih and bias_hh, or no bias, got ")
           << getBiases().size() << " biases";
  return success();
}

/// Elementwise work per step and row under `full`: the bias added to 4H
/// gates, their 4H activations, and c' = f * c + i * g, h' = o * tanh(c')
/// (5 per hidden unit).
static int64_t lstmFullFlops(LstmLayerOp op) {
  int64_t t = op.getSeqLength(), b = op.getBatch(), i = op.getInputSize(),
          h = op.getHiddenSize();
  int64_t gemm = satMul(2, t, b, satMul(4, h), satAdd(i, h));
  return satAdd(gemm, satMul(t, b, 13, h));
}

int64_t LstmLayerOp::getFlops(FlopConvention c, bool) {
  // fvcore has no handle for aten::lstm and torch.utils.flop_counter no rule
  // for mkldnn_rnn_layer: both count 0.
  return c == FlopConvention::Full ? lstmFullFlops(*this) : 0;
}

int64_t LstmLayerOp::getBackwardFlops(FlopConvention c, ArrayRef<bool>) {
  // The gradients of the gates' inputs, states and weights: twice the
  // forward's products, and its elementwise work again.
  return c == FlopConvention::Full ? satMul(2, lstmFullFlops(*this)) : 0;
}

/// Bytes of a [4H] tensor of the op's dtype: bias_ih + bias_hh.
static int64_t lstmBiasBytes(LstmLayerOp op) {
  return tensorBytes(
      RankedTensorType::get({satMul(4, op.getHiddenSize())},
                            tensorOf(op.getInput()).getElementType()));
}

void LstmLayerOp::getSavedTensors(const TorchTarget &, ArrayRef<bool>,
                                  SmallVectorImpl<SavedTensor> &saved) {
  // mkldnn_rnn_layer's backward reads input, weight0..3, hx_, cx_, its
  // three results and the workspace (derivatives.yaml).
  for (unsigned i = 0, e = getNumOperands(); i < e; ++i)
    saved.push_back(SavedTensor::operand(i));
  if (getBiases().empty()) {
    // mkldnn_rnn passes at::zeros of the weights' shapes as the biases.
    saved.push_back(
        SavedTensor::extraBeforeOp(getWeightIh().getType(), "zero_bias_ih"));
    saved.push_back(
        SavedTensor::extraBeforeOp(getWeightHh().getType(), "zero_bias_hh"));
  }
  for (unsigned i = 0; i < 3; ++i)
    saved.push_back(SavedTensor::result(i));
  LstmLayerBuffers buffers = getLstmLayerBuffers(
      getSeqLength(), getBatch(), getInputSize(), getHiddenSize());
  // Allocated by the call, before oneDNN's temporaries: alive at its peak.
  saved.push_back(SavedTensor::extraBeforeOp(
      RankedTensorType::get({buffers.workspace},
                            IntegerType::get(getContext(), 8)),
      "workspace"));
}

void LstmLayerOp::getWorkspaceAllocations(const TorchTarget &,
                                          SmallVectorImpl<int64_t> &sizes) {
  // While the primitive runs: PyTorch's bias_ih + bias_hh (or zeros), the
  // weights reordered for it, its scratchpad.
  LstmLayerBuffers buffers = getLstmLayerBuffers(
      getSeqLength(), getBatch(), getInputSize(), getHiddenSize());
  for (int64_t bytes : {lstmBiasBytes(*this), buffers.forwardWeightsIh,
                        buffers.forwardWeightsHh, buffers.forwardScratchpad})
    if (bytes)
      sizes.push_back(bytes);
}

int64_t LstmLayerOp::getWorkspaceBytes(const TorchTarget &target) {
  return sumWorkspaceAllocations(*this, target);
}

void LstmLayerOp::getBackwardWorkspace(const TorchTarget &target,
                                       ArrayRef<bool> operandNeedsGrad,
                                       SmallVectorImpl<int64_t> &sizes) {
  SmallVector<bool, 3> all(3, true);
  getBackwardWorkspaceForGrads(target, operandNeedsGrad, all, all, sizes);
}

void LstmLayerOp::getBackwardWorkspaceForGrads(
    const TorchTarget &, ArrayRef<bool> operandNeedsGrad,
    ArrayRef<bool> resultHasGrad, ArrayRef<bool> resultGradContiguous,
    SmallVectorImpl<int64_t> &sizes) {
  // mkldnn_rnn_layer_backward: each incoming gradient made contiguous, or
  // zeros where none comes; bias_ih + bias_hh again; every gradient of the
  // primitive, also those nothing asked for (they are dropped afterwards);
  // then oneDNN's reorders of the weights, its float32 bias and scratchpad.
  auto needs = [&](unsigned i) {
    return i < operandNeedsGrad.size() && operandNeedsGrad[i];
  };
  auto has = [&](ArrayRef<bool> flags, unsigned i) {
    return i < flags.size() && flags[i];
  };
  for (unsigned r = 0; r < 3; ++r)
    if (!has(resultHasGrad, r) || !has(resultGradContiguous, r))
      sizes.push_back(tensorBytes(getResult(r)));
  int64_t biasBytes = lstmBiasBytes(*this);
  sizes.push_back(biasBytes);
  for (unsigned i = 0; i < 5; ++i)
    if (!needs(i))
      sizes.push_back(tensorBytes(getOperand(i)));
  // diff_b, the gradient of bias_ih (diff_b2, bias_hh's, is cloned from it
  // after oneDNN's buffers are gone).
  if (getBiases().empty() || !needs(5))
    sizes.push_back(biasBytes);
  LstmLayerBuffers buffers = getLstmLayerBuffers(
      getSeqLength(), getBatch(), getInputSize(), getHiddenSize());
  for (int64_t bytes : {buffers.transposedIh, buffers.transposedHh,
                        buffers.backwardWeightsIh, buffers.backwardWeightsHh,
                        buffers.backwardBias, buffers.backwardScratchpad})
    sizes.push_back(bytes);
}

LogicalResult LstmLayerOp::verifyTarget(const TorchTarget &target,
                                        StepMode mode, bool autocast) {
  std::string reason = getLstmUnmodelledReason(
      target, mode, autocast, tensorOf(getInput()).getElementType());
  if (reason.empty())
    return success();
  return emitOpError("torch.nn.LSTM's memory is not modelled ") << reason;
}

FailureOr<bool> LstmLayerOp::decomposeForTarget(OpBuilder &b,
                                                const TorchTarget &target) {
  // torch 1.13 has no oneDNN LSTM: its CPU runs LSTMCell step by step
  // (_lstm_impl in aten/src/ATen/native/RNN.cpp). CUDA's cuDNN LSTM stays
  // one op (verifyTarget rejects it).
  if (target.device != Device::Cpu || target.version == TorchVersion::V2)
    return false;
  b.setInsertionPoint(*this);
  SmallVector<Value> weights = {getWeightIh(), getWeightHh()};
  llvm::append_range(weights, getBiases());
  // mkldnn_rnn makes a batch-first input contiguous once (buildLstm's
  // transpose and copy); without it, each direction's input projection
  // copies the transposed view itself (matmul's reshape).
  Value input = getInput();
  auto sharedCopy = input.getDefiningOp<ContiguousOp>();
  auto transpose =
      sharedCopy ? sharedCopy.getInput().getDefiningOp<TransposeOp>() : nullptr;
  if (transpose && transpose.getDim0() == 0 && transpose.getDim1() == 1)
    input = ContiguousOp::create(b, getLoc(), input.getType(), transpose);
  else
    sharedCopy = nullptr;
  FailureOr<SmallVector<Value, 3>> cells =
      buildLstmLayerCells(b, getLoc(), input, getH(), getC(), weights,
                          getReverse(), getOnnxGateOrder());
  if (failed(cells))
    return failure();
  replaceAllUsesWith(*cells);
  erase();
  if (sharedCopy && sharedCopy->use_empty())
    sharedCopy->erase();
  return true;
}

//===----------------------------------------------------------------------===//
// torch.nn.LSTM and torch.nn.GRU as PyTorch 2 runs them on the CPU
//===----------------------------------------------------------------------===//

namespace {
/// What the LSTM and GRU builders share: the checks of the module's tensors,
/// h0's rows, the views and the stacking of states.
struct RnnBuilder {
  OpBuilder &b;
  Location loc;
  const RnnConfig &config;
  StringRef kind; // "an LSTM" or "a GRU"
  int64_t gates;  // 4 or 3
  int64_t directions, perLayer, batch, hidden = 0;
  // The width of the states h and of the outputs: proj_size with LSTM
  // projections (weight_hr, last of a layer's weights), else hidden.
  int64_t outSize = 0;
  Type et;

  RnnBuilder(OpBuilder &b, Location loc, const RnnConfig &config,
             StringRef kind, int64_t gates)
      : b(b), loc(loc), config(config), kind(kind), gates(gates),
        directions(config.bidirectional ? 2 : 1),
        perLayer((config.hasBiases ? 4 : 2) + (config.projSize ? 1 : 0)),
        batch(0) {}

  RankedTensorType typeOf(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, et);
  }

  /// Checks the input, the initial states and the number of weights.
  LogicalResult checkModule(Value input, ArrayRef<Value> states,
                            ValueRange params) {
    auto x = cast<RankedTensorType>(input.getType());
    et = x.getElementType();
    if (config.numLayers < 1)
      return mlir::emitError(loc)
             << kind << " needs at least one layer, got " << config.numLayers;
    if (x.getRank() != 3)
      return mlir::emitError(loc)
             << kind
             << "'s input must be [T, B, I] or [B, T, I] (batched), got "
             << shapeStr(x.getShape());
    if (static_cast<int64_t>(params.size()) !=
        satMul(config.numLayers, directions, perLayer))
      return mlir::emitError(loc)
             << kind << " of " << config.numLayers << " layers"
             << (config.bidirectional ? ", bidirectional," : "")
             << (config.hasBiases ? " with" : " without") << " biases takes "
             << config.numLayers * directions * perLayer << " weights, got "
             << params.size();
    int64_t stack = satMul(config.numLayers, directions);
    batch = x.getDimSize(config.batchFirst ? 0 : 1);
    // h0 (the first state) is [L * D, B, proj_size] with projections.
    hidden = cast<RankedTensorType>(states.back().getType()).getShape().back();
    outSize = config.projSize ? config.projSize : hidden;
    for (auto [i, state] : llvm::enumerate(states)) {
      auto t = cast<RankedTensorType>(state.getType());
      int64_t width = i == 0 ? outSize : hidden;
      if (t.getRank() != 3 || t.getDimSize(0) != stack ||
          t.getDimSize(1) != batch || t.getElementType() != et ||
          t.getDimSize(2) != width)
        return mlir::emitError(loc)
               << kind << "'s initial states must be [" << stack << ", "
               << batch << ", "
               << (i == 0 && config.projSize ? "proj_size" : "H")
               << "] of the input's dtype, got " << shapeStr(t.getShape());
    }
    if (hidden < 1 || x.getDimSize(2) < 1 || batch < 1 ||
        x.getDimSize(config.batchFirst ? 1 : 0) < 1)
      return mlir::emitError(loc)
             << kind << " needs steps, rows, features and a hidden size of "
             << "at least 1, got input " << shapeStr(x.getShape())
             << " and H = " << hidden;
    return success();
  }

  /// Checks one layer's and direction's weights for an input of `in`
  /// features.
  LogicalResult checkWeights(ValueRange weights, int64_t layer,
                             int64_t direction, int64_t in) {
    std::string suffix =
        (Twine("_l") + Twine(layer) + (direction ? "_reverse" : "")).str();
    auto check = [&](Value w, ArrayRef<int64_t> shape,
                     StringRef what) -> LogicalResult {
      auto t = cast<RankedTensorType>(w.getType());
      if (t.getShape() == shape && t.getElementType() == et)
        return success();
      return mlir::emitError(loc)
             << kind << "'s " << what << suffix << " must be "
             << shapeStr(shape) << " of the input's dtype, got "
             << shapeStr(t.getShape());
    };
    int64_t rows = satMul(gates, hidden);
    if (failed(check(weights[0], {rows, in}, "weight_ih")) ||
        failed(check(weights[1], {rows, outSize}, "weight_hh")))
      return failure();
    if (config.hasBiases && (failed(check(weights[2], {rows}, "bias_ih")) ||
                             failed(check(weights[3], {rows}, "bias_hh"))))
      return failure();
    if (config.projSize &&
        failed(check(weights.back(), {outSize, hidden}, "weight_hr")))
      return failure();
    return success();
  }

  /// Row `index` of `tensor` along dimension 0, as a view without it
  /// (hx[index], inputs.unbind(0)[index]).
  Value row(Value tensor, int64_t index) {
    auto t = cast<RankedTensorType>(tensor.getType());
    SmallVector<int64_t> shape(t.getShape());
    shape[0] = 1;
    auto slice =
        SliceOp::create(b, loc, typeOf(shape), tensor, 0, index, index + 1, 1);
    return ReshapeOp::create(b, loc, typeOf(t.getShape().drop_front()), slice);
  }

  /// The rows of `tensor` along dimension 0, views without it
  /// (inputs.unbind(0): one backward node stacks their gradients).
  SmallVector<Value> unbind(Value tensor) {
    int64_t rows = cast<RankedTensorType>(tensor.getType()).getDimSize(0);
    return SplitOp::create(b, loc, tensor, 0, SmallVector<int64_t>(rows, 1),
                           /*squeeze=*/true)
        .getResults();
  }

  /// The G column blocks of H of a [B, G * H] tensor (unsafe_chunk(G, 1):
  /// one backward node concatenates their gradients).
  SmallVector<Value> chunks(Value tensor) {
    return SplitOp::create(b, loc, tensor, 1,
                           SmallVector<int64_t>(gates, hidden),
                           /*squeeze=*/false)
        .getResults();
  }

  /// at::stack(values, 0) of [B, W] tensors.
  Value stack(ArrayRef<Value> values) {
    int64_t width = cast<RankedTensorType>(values[0].getType()).getDimSize(1);
    SmallVector<Value> rows;
    for (Value v : values)
      rows.push_back(ReshapeOp::create(b, loc, typeOf({1, batch, width}), v));
    return ConcatOp::create(
        b, loc, typeOf({static_cast<int64_t>(values.size()), batch, width}),
        rows, 0);
  }

  /// The layer's input from the previous layer's outputs: the directions
  /// concatenated, dropout between layers while training.
  Value nextInput(ArrayRef<Value> outputs, int64_t layer) {
    int64_t seq = cast<RankedTensorType>(outputs[0].getType()).getDimSize(0);
    Value next =
        outputs.size() == 1
            ? outputs.front()
            : ConcatOp::create(b, loc, typeOf({seq, batch, 2 * outSize}),
                               outputs, 2)
                  .getResult();
    if (config.dropout != 0 && config.train && layer + 1 < config.numLayers)
      next = DropoutOp::create(b, loc, next.getType(), next,
                               b.getF64FloatAttr(config.dropout),
                               /*inplace=*/nullptr);
    return next;
  }

  /// Runs every layer and direction on the previous layer's output
  /// (`input` for the first): `direction(layerInput, index, reverse,
  /// weights)` builds one and returns its output [T, B, H]. Returns the last
  /// layer's output.
  FailureOr<Value>
  runLayers(Value input, ValueRange params,
            function_ref<FailureOr<Value>(Value, int64_t, bool, ValueRange)>
                direction) {
    Value layerInput = input;
    for (int64_t layer = 0; layer < config.numLayers; ++layer) {
      SmallVector<Value> outputs;
      for (int64_t d = 0; d < directions; ++d) {
        int64_t index = layer * directions + d;
        ValueRange weights = params.slice(index * perLayer, perLayer);
        int64_t in = cast<RankedTensorType>(layerInput.getType()).getDimSize(2);
        if (failed(checkWeights(weights, layer, d, in)))
          return failure();
        FailureOr<Value> output = direction(layerInput, index, d == 1, weights);
        if (failed(output))
          return failure();
        outputs.push_back(*output);
      }
      layerInput = nextInput(outputs, layer);
    }
    return layerInput;
  }

  /// The output back to batch first (a transposed view).
  Value batchFirstOutput(Value output) {
    if (!config.batchFirst)
      return output;
    auto t = cast<RankedTensorType>(output.getType());
    return TransposeOp::create(
        b, loc, typeOf({t.getDimSize(1), t.getDimSize(0), t.getDimSize(2)}),
        output, 0, 1);
  }

  Value transposedInput(Value input) {
    auto x = cast<RankedTensorType>(input.getType());
    return TransposeOp::create(
        b, loc, typeOf({x.getDimSize(1), x.getDimSize(0), x.getDimSize(2)}),
        input, 0, 1);
  }
};
} // namespace

/// One step of a cell: the next states from the step's input projection and
/// the current states.
using CellFn = function_ref<SmallVector<Value>(RnnBuilder &, Value,
                                               ArrayRef<Value>, ValueRange)>;

/// The step builder adds as many ops for backward: a sequence that would
/// unroll past 2^20 of them is one error rather than gigabytes of IR.
static LogicalResult checkUnrolledOps(Location loc, StringRef kind, int64_t seq,
                                      int64_t layers, int64_t directions,
                                      int64_t opsPerStep) {
  constexpr int64_t kMaxUnrolledOps = int64_t(1) << 20;
  if (satMul(seq, layers, directions, opsPerStep) <= kMaxUnrolledOps)
    return success();
  return mlir::emitError(loc)
         << kind << " of " << seq << " steps, " << layers << " layers and "
         << directions
         << " directions unrolls into more than 2^20 ops; analyse a "
            "shorter sequence (the saved bytes grow linearly in it)";
}

/// One layer and direction run cell by cell (FullLayer): the input's
/// projection for every step at once (tagged `module`: CUDA runs cuDNN's
/// fused kernel instead, which the step builder rejects), unbound into
/// steps, then `cell(input_t, state)` per step in time order (reversed for
/// the backward direction). Returns the steps' outputs (the first state, h)
/// stacked and sets `state` to the final states.
static Value buildCellLayer(RnnBuilder &rnn, StringRef module, Value x,
                            SmallVectorImpl<Value> &state, bool reverse,
                            ValueRange weights, CellFn cell) {
  OpBuilder &b = rnn.b;
  int64_t seq = cast<RankedTensorType>(x.getType()).getDimSize(0);
  Value biasIh = rnn.config.hasBiases ? weights[2] : Value();
  auto inputGates = LinearOp::create(
      b, rnn.loc, rnn.typeOf({seq, rnn.batch, rnn.gates * rnn.hidden}), x,
      weights[0], biasIh);
  inputGates->setAttrs({b.getNamedAttr(NNDialect::kCpuDecompositionAttrName,
                                       b.getStringAttr(module))});
  SmallVector<Value> stepGates = rnn.unbind(inputGates);
  SmallVector<Value> steps;
  for (int64_t i = 0; i < seq; ++i) {
    SmallVector<Value> next =
        cell(rnn, stepGates[reverse ? seq - 1 - i : i], state, weights);
    state.assign(next.begin(), next.end());
    steps.push_back(state.front());
  }
  if (reverse)
    std::reverse(steps.begin(), steps.end());
  return rnn.stack(steps);
}

/// A module the CPU runs cell by cell (_rnn_impl_with_concat with FullLayer
/// and LSTMCell, GRUCell or SimpleCell): batch first as a transposed view;
/// each layer and direction by buildCellLayer from its rows of the initial
/// states; the last layer's output and each state's final values stacked.
static FailureOr<RnnResults>
buildCellByCell(OpBuilder &b, Location loc, const RnnConfig &config,
                StringRef kind, StringRef module, int64_t gates,
                int64_t opsPerStep, Value input, ArrayRef<Value> initial,
                ValueRange params, CellFn cell) {
  RnnBuilder rnn(b, loc, config, kind, gates);
  if (failed(rnn.checkModule(input, initial, params)))
    return failure();
  Value layerInput = config.batchFirst ? rnn.transposedInput(input) : input;
  int64_t seq = cast<RankedTensorType>(layerInput.getType()).getDimSize(0);
  if (failed(checkUnrolledOps(loc, kind, seq, config.numLayers, rnn.directions,
                              opsPerStep)))
    return failure();
  SmallVector<SmallVector<Value>> finals(initial.size());
  FailureOr<Value> output =
      rnn.runLayers(layerInput, params,
                    [&](Value x, int64_t index, bool reverse,
                        ValueRange weights) -> FailureOr<Value> {
                      SmallVector<Value> state;
                      for (Value v : initial)
                        state.push_back(rnn.row(v, index));
                      Value steps = buildCellLayer(rnn, module, x, state,
                                                   reverse, weights, cell);
                      for (auto [last, all] : llvm::zip(state, finals))
                        all.push_back(last);
                      return steps;
                    });
  if (failed(output))
    return failure();
  return RnnResults{rnn.batchFirstOutput(*output), rnn.stack(finals.front()),
                    finals.size() > 1 ? rnn.stack(finals[1]) : Value(),
                    *output};
}

/// The hidden projection of one step: linear_hh(h).
static Value hiddenProjection(RnnBuilder &rnn, Value h, ValueRange weights) {
  Value biasHh = rnn.config.hasBiases ? weights[3] : Value();
  return LinearOp::create(rnn.b, rnn.loc,
                          rnn.typeOf({rnn.batch, rnn.gates * rnn.hidden}), h,
                          weights[1], biasHh);
}

FailureOr<RnnResults> vram::nn::buildGru(OpBuilder &b, Location loc,
                                         const RnnConfig &config, Value input,
                                         Value h0, ValueRange params) {
  auto inplace = b.getUnitAttr();
  return buildCellByCell(
      b, loc, config, "a GRU", "torch.nn.GRU", /*gates=*/3, /*opsPerStep=*/16,
      input, {h0}, params,
      [&](RnnBuilder &rnn, Value ig, ArrayRef<Value> state,
          ValueRange weights) -> SmallVector<Value> {
        // GRUCell with pre-computed input gates (RNN.cpp): the hidden
        // projection, then its chunks updated in place.
        Value h = state.front();
        auto stateType = rnn.typeOf({rnn.batch, rnn.hidden});
        SmallVector<Value> hg = rnn.chunks(hiddenProjection(rnn, h, weights));
        SmallVector<Value> igs = rnn.chunks(ig);
        // The blocks of the reset, update and new gates.
        int64_t r = config.onnxGateOrder ? 1 : 0,
                z = config.onnxGateOrder ? 0 : 1, n = 2;
        Value reset = AddOp::create(b, loc, stateType, hg[r], igs[r], inplace);
        reset = SigmoidOp::create(b, loc, stateType, reset, inplace);
        Value update = AddOp::create(b, loc, stateType, hg[z], igs[z], inplace);
        update = SigmoidOp::create(b, loc, stateType, update, inplace);
        Value scaled = MulOp::create(b, loc, stateType, hg[n], reset, inplace);
        Value candidate =
            AddOp::create(b, loc, stateType, igs[n], scaled, UnitAttr());
        candidate = TanhOp::create(b, loc, stateType, candidate, inplace);
        // (hidden - new_gate).mul_(input_gate).add_(new_gate)
        Value next = SubOp::create(b, loc, stateType, h, candidate, UnitAttr());
        next = MulOp::create(b, loc, stateType, next, update, inplace);
        return {AddOp::create(b, loc, stateType, next, candidate, inplace)};
      });
}

FailureOr<RnnResults> vram::nn::buildSimpleRnn(OpBuilder &b, Location loc,
                                               const RnnConfig &config,
                                               bool relu, Value input, Value h0,
                                               ValueRange params) {
  return buildCellByCell(
      b, loc, config, "an RNN", "torch.nn.RNN", /*gates=*/1, /*opsPerStep=*/6,
      input, {h0}, params,
      [&](RnnBuilder &rnn, Value ig, ArrayRef<Value> state,
          ValueRange weights) -> SmallVector<Value> {
        // SimpleCell: nonlinearity(linear_hh(h).add_(input)), a new tensor
        // that the activation keeps (tanh and relu: their result).
        auto stateType = rnn.typeOf({rnn.batch, rnn.hidden});
        Value hg = hiddenProjection(rnn, state.front(), weights);
        hg = AddOp::create(b, loc, stateType, hg, ig, b.getUnitAttr());
        if (relu)
          return {ReluOp::create(b, loc, stateType, hg, UnitAttr())};
        return {TanhOp::create(b, loc, stateType, hg, UnitAttr())};
      });
}

/// LSTMCell with pre-computed input gates (RNN.cpp): the hidden projection
/// plus the input's in place, its chunks' sigmoid_ / tanh_ in place (the
/// [B, 4H] gates kept), `(f * c).add_(i * g)` (c kept), `o * c.tanh()`
/// (both kept), then with projections `h.matmul(weight_hr.t())` (h kept).
static SmallVector<Value> lstmCell(RnnBuilder &rnn, Value ig,
                                   ArrayRef<Value> state, ValueRange weights) {
  OpBuilder &b = rnn.b;
  Location loc = rnn.loc;
  auto inplace = b.getUnitAttr();
  auto gatesType = rnn.typeOf({rnn.batch, 4 * rnn.hidden});
  auto cellType = rnn.typeOf({rnn.batch, rnn.hidden});
  Value all = AddOp::create(
      b, loc, gatesType, hiddenProjection(rnn, state[0], weights), ig, inplace);
  SmallVector<Value> g = rnn.chunks(all);
  // The blocks of the input, forget, cell and output gates.
  bool onnx = rnn.config.onnxGateOrder;
  Value in = SigmoidOp::create(b, loc, cellType, g[0], inplace);
  Value forget = SigmoidOp::create(b, loc, cellType, g[onnx ? 2 : 1], inplace);
  Value cand = TanhOp::create(b, loc, cellType, g[onnx ? 3 : 2], inplace);
  Value out = SigmoidOp::create(b, loc, cellType, g[onnx ? 1 : 3], inplace);
  Value c = MulOp::create(b, loc, cellType, forget, state[1], UnitAttr());
  c = AddOp::create(b, loc, cellType, c,
                    MulOp::create(b, loc, cellType, in, cand, UnitAttr()),
                    inplace);
  Value h = MulOp::create(b, loc, cellType, out,
                          TanhOp::create(b, loc, cellType, c, UnitAttr()),
                          UnitAttr());
  if (!rnn.config.projSize)
    return {h, c};
  Value projected = LinearOp::create(
      b, loc, rnn.typeOf({rnn.batch, rnn.outSize}), h, weights.back(), Value());
  return {projected, c};
}

/// torch.nn.LSTM with projections (proj_size), which oneDNN does not run:
/// LSTMCell per step.
static FailureOr<RnnResults> buildProjectedLstm(OpBuilder &b, Location loc,
                                                const RnnConfig &config,
                                                Value input, Value h0, Value c0,
                                                ValueRange params) {
  return buildCellByCell(b, loc, config, "an LSTM", "torch.nn.LSTM",
                         /*gates=*/4, /*opsPerStep=*/20, input, {h0, c0},
                         params, lstmCell);
}

FailureOr<SmallVector<Value, 3>>
vram::nn::buildLstmLayerCells(OpBuilder &b, Location loc, Value input, Value h,
                              Value c, ValueRange weights, bool reverse,
                              bool onnxGateOrder) {
  RnnConfig config;
  config.hasBiases = weights.size() == 4;
  config.onnxGateOrder = onnxGateOrder;
  RnnBuilder rnn(b, loc, config, "an LSTM", 4);
  auto x = cast<RankedTensorType>(input.getType());
  rnn.et = x.getElementType();
  rnn.batch = x.getDimSize(1);
  rnn.hidden = rnn.outSize = cast<RankedTensorType>(h.getType()).getDimSize(1);
  if (failed(checkUnrolledOps(loc, rnn.kind, x.getDimSize(0), 1, 1,
                              /*opsPerStep=*/20)))
    return failure();
  SmallVector<Value> state = {h, c};
  Value output = buildCellLayer(rnn, "torch.nn.LSTM", input, state, reverse,
                                weights, lstmCell);
  return SmallVector<Value, 3>{output, state[0], state[1]};
}

FailureOr<RnnResults> vram::nn::buildLstm(OpBuilder &b, Location loc,
                                          const RnnConfig &config, Value input,
                                          Value h0, Value c0,
                                          ValueRange params) {
  // With projections h0 is [L * D, B, proj_size], c0 [L * D, B, H] (and
  // proj_size < H), and each layer has a weight_hr.
  auto h0Type = cast<RankedTensorType>(h0.getType()),
       c0Type = cast<RankedTensorType>(c0.getType());
  if (h0Type.getRank() == 3 && c0Type.getRank() == 3 &&
      h0Type.getDimSize(2) < c0Type.getDimSize(2)) {
    RnnConfig projected = config;
    projected.projSize = h0Type.getDimSize(2);
    return buildProjectedLstm(b, loc, projected, input, h0, c0, params);
  }
  RnnBuilder rnn(b, loc, config, "an LSTM", 4);
  if (failed(rnn.checkModule(input, {h0, c0}, params)))
    return failure();
  // mkldnn_rnn: the input time first, contiguous.
  Value layerInput = input;
  if (config.batchFirst) {
    Value t = rnn.transposedInput(input);
    layerInput = ContiguousOp::create(b, loc, t.getType(), t);
  }
  int64_t seq = cast<RankedTensorType>(layerInput.getType()).getDimSize(0);
  auto stateType = rnn.typeOf({rnn.batch, rnn.hidden});
  SmallVector<Value> hy, cy;
  FailureOr<Value> output = rnn.runLayers(
      layerInput, params,
      [&](Value x, int64_t index, bool reverse,
          ValueRange weights) -> FailureOr<Value> {
        SmallVector<Value> operands = {x, rnn.row(h0, index),
                                       rnn.row(c0, index)};
        llvm::append_range(operands, weights);
        SmallVector<NamedAttribute> attrs;
        if (reverse)
          attrs.push_back(b.getNamedAttr("reverse", b.getUnitAttr()));
        if (config.onnxGateOrder)
          attrs.push_back(b.getNamedAttr("onnx_gate_order", b.getUnitAttr()));
        auto lstm = LstmLayerOp::create(
            b, loc,
            TypeRange{rnn.typeOf({seq, rnn.batch, rnn.hidden}), stateType,
                      stateType},
            operands, attrs);
        hy.push_back(lstm.getHy());
        cy.push_back(lstm.getCy());
        return lstm.getOutput();
      });
  if (failed(output))
    return failure();
  return RnnResults{rnn.batchFirstOutput(*output), rnn.stack(hy), rnn.stack(cy),
                    *output};
}
