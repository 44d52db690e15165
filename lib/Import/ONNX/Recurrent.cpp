//===- Recurrent.cpp - LSTM, GRU and RNN converters -----------------------===//
//
// One ONNX LSTM / GRU / RNN node is one layer (one or two directions) of
// torch.nn.LSTM / GRU / RNN, built as PyTorch 2 runs it on the CPU by the
// builders every front end shares (Recurrent.h).
//
// torch.onnx writes each layer as such a node over weights in ONNX's gate
// order (LSTM i, o, f, c; GRU z, r, h) made from the module's parameters:
// W = Unsqueeze(Concat(Slice(weight_ih_l0, ...), ...)), two directions
// concatenated, B = the two biases concatenated. That reordering is not part
// of what PyTorch runs, so it is read back to the parameters themselves
// (their names and PyTorch's gate order). Weights that are not such a
// reordering (initializers in ONNX's order, as torch 2's default exporter,
// a constant-folded export or another framework writes them) are read per
// direction as views in ONNX's order, which the cells and nn.lstm_layer
// record (RnnConfig::onnxGateOrder). A batch-first module's input is the
// Transpose torch.onnx adds before the node: the module is built batch
// first from the Transpose's input, as PyTorch runs it.
//
//===----------------------------------------------------------------------===//

#include "ConverterTable.h"
#include "Importer.h"

#include "vram/Dialect/NN/Recurrent.h"

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;

namespace {
/// The three recurrent node types.
struct RecurrentKind {
  llvm::StringLiteral name; // "LSTM"
  int64_t gates;
  /// ONNX's gate blocks as PyTorch's gate indexes (LSTM: ONNX i, o, f, c are
  /// PyTorch's blocks 0, 3, 1, 2 of i, f, g, o).
  llvm::ArrayRef<int64_t> onnxToTorch;
  /// The default activations (one direction).
  llvm::ArrayRef<llvm::StringLiteral> activations;
};

constexpr int64_t kLstmOrder[] = {0, 3, 1, 2};
constexpr int64_t kGruOrder[] = {1, 0, 2};
constexpr int64_t kRnnOrder[] = {0};
constexpr llvm::StringLiteral kLstmActivations[] = {"Sigmoid", "Tanh", "Tanh"};
constexpr llvm::StringLiteral kGruActivations[] = {"Sigmoid", "Tanh"};
constexpr llvm::StringLiteral kRnnActivations[] = {"Tanh"};

const RecurrentKind kLstm{"LSTM", 4, kLstmOrder, kLstmActivations};
const RecurrentKind kGru{"GRU", 3, kGruOrder, kGruActivations};
const RecurrentKind kRnn{"RNN", 1, kRnnOrder, kRnnActivations};

/// Reads a node's weights back to the tensors PyTorch computes with.
struct WeightReader {
  const RecurrentKind &kind;
  int64_t hidden;

  /// `v` without dimension 0 of size 1 (Unsqueeze(x, 0), or a reshape).
  static Value unsqueezedFrom(Value v) {
    auto reshape = v.getDefiningOp<nn::ReshapeOp>();
    if (!reshape)
      return {};
    auto from = cast<RankedTensorType>(reshape.getInput().getType());
    auto to = cast<RankedTensorType>(v.getType());
    if (to.getRank() != from.getRank() + 1 || to.getDimSize(0) != 1 ||
        to.getShape().drop_front() != from.getShape())
      return {};
    return reshape.getInput();
  }

  /// The per-direction [G * H, ...] tensors of a [D, G * H, ...] node input
  /// that torch.onnx built by unsqueezing (and for two directions
  /// concatenating) them, or none.
  static SmallVector<Value> directionsOf(Value v, int64_t directions) {
    if (directions == 1) {
      if (Value from = unsqueezedFrom(v))
        return {from};
      return {};
    }
    auto concat = v.getDefiningOp<nn::ConcatOp>();
    if (!concat || concat.getDim() != 0 ||
        concat.getInputs().size() != static_cast<size_t>(directions))
      return {};
    SmallVector<Value> parts;
    for (Value in : concat.getInputs()) {
      Value from = unsqueezedFrom(in);
      if (!from)
        return {};
      parts.push_back(from);
    }
    return parts;
  }

  /// The tensor whose gate blocks `v` reorders from PyTorch's order into
  /// ONNX's (a Concat along dimension 0 of Slices of it; an RNN's single
  /// gate needs none), or null.
  Value torchWeightOf(Value v) const {
    int64_t rows = mulSat(kind.gates, hidden);
    if (cast<RankedTensorType>(v.getType()).getDimSize(0) != rows)
      return {};
    if (kind.gates == 1)
      return v;
    auto concat = v.getDefiningOp<nn::ConcatOp>();
    if (!concat || concat.getDim() != 0)
      return {};
    Value source;
    SmallVector<int64_t> blocks; // PyTorch's blocks, in ONNX's order
    for (Value in : concat.getInputs()) {
      auto slice = in.getDefiningOp<nn::SliceOp>();
      if (!slice || slice.getDim() != 0 || slice.getStep() != 1 ||
          (source && slice.getInput() != source))
        return {};
      source = slice.getInput();
      int64_t start = slice.getStart(), end = slice.getEnd();
      if (start % hidden || end % hidden || end <= start)
        return {};
      for (int64_t block = start / hidden; block < end / hidden; ++block)
        blocks.push_back(block);
    }
    if (!source ||
        cast<RankedTensorType>(source.getType()).getDimSize(0) != rows ||
        blocks != ArrayRef<int64_t>(kind.onnxToTorch))
      return {};
    return source;
  }

  /// weight_ih (or weight_hh) of each direction from W (R) when torch.onnx
  /// reordered them from parameters, else none.
  SmallVector<Value> torchWeights(Value w, int64_t directions) const {
    SmallVector<Value> weights;
    for (Value part : directionsOf(w, directions)) {
      Value weight = torchWeightOf(part);
      if (!weight)
        return {};
      weights.push_back(weight);
    }
    return weights;
  }

  /// bias_ih and bias_hh of each direction from B, as torchWeights.
  SmallVector<Value> torchBiases(Value bias, int64_t directions) const {
    SmallVector<Value> biases;
    for (Value part : directionsOf(bias, directions)) {
      auto concat = part.getDefiningOp<nn::ConcatOp>();
      if (!concat || concat.getDim() != 0 || concat.getInputs().size() != 2)
        return {};
      for (Value half : concat.getInputs()) {
        Value b = torchWeightOf(half);
        if (!b)
          return {};
        biases.push_back(b);
      }
    }
    return biases;
  }
};
} // namespace

/// Rows [start, start + size) of `v` along `dim`, without dimension 0 when
/// it is then 1 and `squeeze` (views).
static Value viewRows(OpBuilder &b, Location loc, Value v, int64_t dim,
                      int64_t start, int64_t size, bool squeeze) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] = size;
  Value slice = nn::SliceOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, dim, start,
      start + size, 1);
  if (!squeeze)
    return slice;
  return nn::ReshapeOp::create(
      b, loc,
      RankedTensorType::get(ArrayRef<int64_t>(shape).drop_front(),
                            t.getElementType()),
      slice);
}

/// `v` with dimensions `d0` and `d1` swapped (a view).
static Value swapDims(OpBuilder &b, Location loc, Value v, int64_t d0,
                      int64_t d1) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape(t.getShape());
  std::swap(shape[d0], shape[d1]);
  return nn::TransposeOp::create(
      b, loc, RankedTensorType::get(shape, t.getElementType()), v, d0, d1);
}

static LogicalResult convertRecurrent(OpBinder &op, const RecurrentKind &kind) {
  OpBuilder &b = op.builder();
  Location loc = op.loc;
  std::string direction = op.stringAttr("direction", "forward");
  if (direction != "forward" && direction != "bidirectional")
    return op.error() << "direction '" << direction
                      << "' is not modelled (torch.nn." << kind.name
                      << " runs 'forward' or 'bidirectional')";
  int64_t directions = direction == "bidirectional" ? 2 : 1;
  for (StringRef unsupported : {"clip", "activation_alpha", "activation_beta"})
    if (op.attrs.get(unsupported))
      return op.error() << "the attribute '" << unsupported
                        << "' is not modelled (torch.nn." << kind.name
                        << " has none)";
  if (op.intAttr("input_forget", 0) != 0)
    return op.error() << "input_forget=1 (coupled input and forget gates) is "
                         "not modelled (torch.nn.LSTM has none)";
  if (&kind == &kGru && op.intAttr("linear_before_reset", 0) != 1)
    return op.error() << "linear_before_reset=0 is not modelled: "
                         "torch.nn.GRU applies the reset gate after the "
                         "hidden projection (linear_before_reset=1)";
  // The activations: the defaults, or Relu for every direction of an RNN.
  bool relu = false;
  if (auto *acts = op.attrs.get("activations")) {
    relu = &kind == &kRnn && acts->strings_size() > 0 &&
           acts->strings(0) == "Relu";
    for (int k = 0; k < acts->strings_size(); ++k) {
      StringRef act = acts->strings(k);
      StringRef expected =
          relu ? "Relu"
               : StringRef(kind.activations[k % kind.activations.size()]);
      if (act != expected)
        return op.error() << "activations other than torch.nn." << kind.name
                          << "'s are not modelled, got '" << act
                          << "' at position " << k;
    }
  }
  if (op.hasInput(4)) {
    // Lengths that all equal the sequence's are no lengths at all.
    const ConstTensor *lengths = op.constInput(4);
    Entry *x = op.inputEntry(0);
    int64_t layout = op.intAttr("layout", 0);
    bool full = lengths && x && x->shape().size() == 3;
    for (int64_t k = 0; full && k < lengths->numElements(); ++k)
      full = lengths->getI(k) == x->shape()[layout == 0 ? 0 : 1];
    if (!full)
      return op.error() << "sequence_lens (sequences of different lengths, "
                           "PyTorch's packed sequences) is not modelled";
  }
  if (op.hasInput(7))
    return op.error() << "peephole weights (input P) are not modelled "
                         "(torch.nn.LSTM has none)";

  FailureOr<Value> x = op.tensor(0), w = op.tensor(1), r = op.tensor(2),
                   bias = op.optionalTensor(3);
  if (failed(x) || failed(w) || failed(r) || failed(bias))
    return failure();
  auto rType = cast<RankedTensorType>(r->getType());
  auto xType = cast<RankedTensorType>(x->getType());
  if (xType.getRank() != 3 || rType.getRank() != 3 ||
      rType.getDimSize(0) != directions ||
      rType.getDimSize(1) != mulSat(kind.gates, rType.getDimSize(2)))
    return op.error() << "expects X [T, B, I] and R [" << directions << ", "
                      << kind.gates << " * H, H], got " << xType << " and "
                      << rType;
  int64_t hidden = rType.getDimSize(2);
  if (op.intAttr("hidden_size", hidden) != hidden)
    return op.error() << "hidden_size " << op.intAttr("hidden_size", hidden)
                      << " does not match R's " << rType;
  auto wType = cast<RankedTensorType>(w->getType());
  if (wType.getRank() != 3 || wType.getDimSize(0) != directions ||
      wType.getDimSize(1) != rType.getDimSize(1) ||
      wType.getDimSize(2) != xType.getDimSize(2))
    return op.error() << "expects W [" << directions << ", "
                      << rType.getDimSize(1) << ", " << xType.getDimSize(2)
                      << "], got " << wType;
  if (*bias) {
    auto bType = cast<RankedTensorType>(bias->getType());
    if (bType.getRank() != 2 || bType.getDimSize(0) != directions ||
        bType.getDimSize(1) != mulSat(2, rType.getDimSize(1)))
      return op.error() << "expects B [" << directions << ", "
                        << mulSat(2, rType.getDimSize(1)) << "], got " << bType;
  }

  nn::RnnConfig config;
  config.bidirectional = directions == 2;
  config.hasBiases = static_cast<bool>(*bias);
  // layout=1 is batch first; torch.onnx writes batch_first=True as a
  // Transpose of the input (and of the output) around a time-first node.
  bool batchFirstLayout = op.intAttr("layout", 0) == 1;
  Value input = *x;
  config.batchFirst = batchFirstLayout;
  if (auto transpose = x->getDefiningOp<nn::PermuteOp>();
      !batchFirstLayout && transpose &&
      transpose.getDims() == ArrayRef<int64_t>{1, 0, 2}) {
    input = transpose.getInput();
    config.batchFirst = true;
  }
  int64_t batch = xType.getDimSize(batchFirstLayout ? 0 : 1);

  // The weights of each direction: w_ih, w_hh[, b_ih, b_hh].
  WeightReader reader{kind, hidden};
  SmallVector<Value> wih = reader.torchWeights(*w, directions),
                     whh = reader.torchWeights(*r, directions), biases;
  if (*bias)
    biases = reader.torchBiases(*bias, directions);
  bool torchOrder = !wih.empty() && !whh.empty() && (!*bias || !biases.empty());
  if (!torchOrder) {
    config.onnxGateOrder = kind.gates > 1;
    wih.clear();
    whh.clear();
    biases.clear();
    int64_t rows = rType.getDimSize(1);
    for (int64_t d = 0; d < directions; ++d) {
      wih.push_back(viewRows(b, loc, *w, 0, d, 1, true));
      whh.push_back(viewRows(b, loc, *r, 0, d, 1, true));
      if (*bias) {
        Value row = viewRows(b, loc, *bias, 0, d, 1, true);
        biases.push_back(viewRows(b, loc, row, 0, 0, rows, false));
        biases.push_back(viewRows(b, loc, row, 0, rows, rows, false));
      }
    }
  }
  SmallVector<Value> params;
  for (int64_t d = 0; d < directions; ++d) {
    params.append({wih[d], whh[d]});
    if (*bias)
      params.append({biases[2 * d], biases[2 * d + 1]});
  }

  // The initial states [D, B, H] (zeros when absent, as PyTorch's default).
  Type et = xType.getElementType();
  auto stateType = RankedTensorType::get({directions, batch, hidden}, et);
  auto initialState = [&](int idx) -> FailureOr<Value> {
    auto zeros = [&](RankedTensorType type) -> Value {
      return nn::ConstantOp::create(
          b, loc,
          DenseElementsAttr::get(type, b.getFloatAttr(et, 0.0).getValue()));
    };
    if (!op.hasInput(idx))
      return zeros(stateType);
    // torch.onnx's dynamo exporter folds the module's zero states into an
    // initializer: a constant, not a parameter (its values when the file
    // has them, else PyTorch's zeros).
    FailureOr<Value> state;
    if (Entry *e = op.inputEntry(idx); e && e->kind == Entry::Init) {
      ConstTensor values;
      std::string err;
      if (decodeTensor(*e->init, values, err))
        state = op.im.materialize(values, et, loc);
      else
        state = zeros(RankedTensorType::get(e->shape(), et));
    } else {
      state = op.tensor(idx);
    }
    if (failed(state))
      return failure();
    if (batchFirstLayout && // [B, D, H]
        cast<RankedTensorType>(state->getType()).getRank() == 3)
      return swapDims(b, loc, *state, 0, 1);
    return state;
  };
  FailureOr<Value> h0 = initialState(5);
  if (failed(h0))
    return failure();
  if (cast<RankedTensorType>(h0->getType()) != stateType)
    return op.error() << "initial_h must be " << stateType << ", got "
                      << h0->getType();

  FailureOr<nn::RnnResults> results;
  if (&kind == &kLstm) {
    FailureOr<Value> c0 = initialState(6);
    if (failed(c0))
      return failure();
    if (cast<RankedTensorType>(c0->getType()) != stateType)
      return op.error() << "initial_c must be " << stateType << ", got "
                        << c0->getType();
    results = nn::buildLstm(b, loc, config, input, *h0, *c0, params);
  } else if (&kind == &kGru) {
    results = nn::buildGru(b, loc, config, input, *h0, params);
  } else {
    results = nn::buildSimpleRnn(b, loc, config, relu, input, *h0, params);
  }
  if (failed(results))
    return failure();

  // Y: [T, D, B, H] (layout 1: [B, T, D, H]), a view of the module's output
  // [T, B, D * H] (the directions concatenated along the features).
  Value out = batchFirstLayout ? results->output : results->timeFirstOutput;
  auto outType = cast<RankedTensorType>(out.getType());
  Value y = nn::ReshapeOp::create(
      b, loc,
      RankedTensorType::get(
          {outType.getDimSize(0), outType.getDimSize(1), directions, hidden},
          et),
      out);
  op.setResult(0, batchFirstLayout ? y : swapDims(b, loc, y, 1, 2));
  // Y_h and Y_c: [D, B, H] (layout 1: [B, D, H]).
  auto state = [&](Value v) {
    return batchFirstLayout ? swapDims(b, loc, v, 0, 1) : v;
  };
  op.setResult(1, state(results->hy));
  if (results->cy)
    op.setResult(2, state(results->cy));
  return success();
}

void vram::onnx_import::registerRecurrentConverters(ConverterTable &table) {
  table.onOp("LSTM", 7,
             [](OpBinder &op) { return convertRecurrent(op, kLstm); });
  table.onOp("GRU", 7, [](OpBinder &op) { return convertRecurrent(op, kGru); });
  table.onOp("RNN", 7, [](OpBinder &op) { return convertRecurrent(op, kRnn); });
}
