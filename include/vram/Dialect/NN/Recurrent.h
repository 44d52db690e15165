//===- Recurrent.h - torch.nn.LSTM and GRU as nn ops ------------*- C++ -*-===//
//
// The recurrent modules as PyTorch 2 runs them on the CPU, built from nn ops
// for every front end (aten.lstm.input / aten.gru.input of a torch.export
// archive, torch::nn::LSTM / GRU of LibTorch): LSTM as one oneDNN call per
// layer and direction (nn.lstm_layer, mkldnn_rnn in aten/src/ATen/native/
// mkldnn/RNN.cpp), GRU cell by cell as GRUCell in aten/src/ATen/native/
// RNN.cpp computes it (autograd records its elementwise ops one by one),
// RNN likewise (SimpleCell).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_DIALECT_NN_RECURRENT_H
#define VRAM_DIALECT_NN_RECURRENT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallVector.h"

namespace vram::nn {

/// A recurrent module's configuration (aten.lstm.input's and
/// aten.gru.input's arguments).
struct RnnConfig {
  int64_t numLayers = 1;
  bool hasBiases = true, bidirectional = false, batchFirst = false;
  double dropout = 0.0;
  bool train = true;
  /// LSTM projections (proj_size): 0 for none.
  int64_t projSize = 0;
  /// Weights with their row blocks in ONNX's gate order (LSTM i, o, f, c;
  /// GRU z, r, h) instead of PyTorch's (i, f, g, o; r, z, n): an ONNX
  /// model's own weights (a constant-folded export's initializers), not
  /// torch.onnx's reordering of PyTorch parameters. The bytes are the same;
  /// the cells read each gate from its block (nn.lstm_layer records it).
  bool onnxGateOrder = false;
};

/// The module's results: the output of every step, the last hidden state
/// of every layer and direction ([L * D, B, H]) and, for an LSTM, the last
/// cell state (null for a GRU). `timeFirstOutput` is `output` before a batch
/// first module transposes it back ([T, B, D * H]; `output` itself when the
/// module is time first).
struct RnnResults {
  mlir::Value output, hy, cy;
  mlir::Value timeFirstOutput;
};

/// aten.lstm: `input` [T, B, I] ([B, T, I] batch first: transposed and made
/// contiguous), `h0` and `c0` [L * D, B, H], `params` the flat weights
/// (w_ih, w_hh[, b_ih, b_hh] per layer and direction). Emits a located
/// error and fails on shapes that do not fit together.
mlir::FailureOr<RnnResults> buildLstm(mlir::OpBuilder &b, mlir::Location loc,
                                      const RnnConfig &config,
                                      mlir::Value input, mlir::Value h0,
                                      mlir::Value c0, mlir::ValueRange params);

/// One layer and direction of an LSTM as a CPU without oneDNN's LSTM runs
/// it (torch 1.13): the input's projection for every step at once, then
/// LSTMCell per step (in reverse time order for `reverse`). `input` [T, B,
/// I], `h` and `c` [B, H], `weights` (w_ih, w_hh[, b_ih, b_hh]); returns the
/// output [T, B, H] and the last h and c. `onnxGateOrder`: the weights'
/// blocks are in ONNX's order (RnnConfig).
mlir::FailureOr<llvm::SmallVector<mlir::Value, 3>>
buildLstmLayerCells(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                    mlir::Value h, mlir::Value c, mlir::ValueRange weights,
                    bool reverse, bool onnxGateOrder);

/// aten.gru on the CPU: per layer and direction the input's projection for
/// every step at once, then per step the hidden projection and the gates in
/// place (GRUCell), the steps' hidden states stacked.
mlir::FailureOr<RnnResults> buildGru(mlir::OpBuilder &b, mlir::Location loc,
                                     const RnnConfig &config, mlir::Value input,
                                     mlir::Value h0, mlir::ValueRange params);

/// aten.rnn_tanh / aten.rnn_relu (torch.nn.RNN) on the CPU: SimpleCell,
/// per step `tanh(linear_hh(h).add_(ig))` (or relu) over the input's
/// projection for every step.
mlir::FailureOr<RnnResults> buildSimpleRnn(mlir::OpBuilder &b,
                                           mlir::Location loc,
                                           const RnnConfig &config, bool relu,
                                           mlir::Value input, mlir::Value h0,
                                           mlir::ValueRange params);

} // namespace vram::nn

#endif // VRAM_DIALECT_NN_RECURRENT_H
