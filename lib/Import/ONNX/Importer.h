//===- Importer.h - the core of the ONNX importer ---------------*- C++ -*-===//
//
// The importer's core, shared by the op converters: it turns a ModelProto
// into values (function arguments, initializers as nn.param/nn.buffer on
// first use, folded constants), keeps the node locations, orders the nodes,
// and hands each node to the converter that ConverterTable registers for its
// op type and opset. Converters read their node through an OpBinder.
//
// Internal to lib/Import/ONNX.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_ONNX_IMPORTER_H
#define VRAM_LIB_IMPORT_ONNX_IMPORTER_H

#include "ConstTensor.h"
#include "FloatRounding.h"

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Import/InferredOp.h"
#include "vram/Import/ONNX.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/GlobPattern.h"

#include "onnx/onnx_pb.h"

#include <deque>
#include <memory>

namespace vram::onnx_import {

/// The opset every model is converted to (onnx::version_conversion) before
/// its nodes are converted, so that converters are written for it once.
/// libonnx 1.12 knows opsets up to 17.
constexpr int64_t kTargetOpset = 17;

/// What an ONNX tensor name stands for during the import.
struct Entry {
  enum Kind { Tensor, Const, Init, TransposedInit } kind = Tensor;
  mlir::Value value;                       // Tensor
  std::shared_ptr<ConstTensor> cst;        // Const (and decoded integer Init)
  const onnx::TensorProto *init = nullptr; // Init, TransposedInit
  /// TransposedInit: a Transpose of an initializer, built (nn.permute of the
  /// parameter, at `viewLoc`) where it is first used, so that parameters
  /// keep the order of their first use by a layer.
  llvm::SmallVector<int64_t, 4> perm;
  mlir::LocationAttr viewLoc;

  /// The shape of the tensor (Init and TransposedInit from the dims).
  llvm::SmallVector<int64_t, 4> shape() const;
};

/// A node's attributes, read with defaults.
class NodeAttrs : public FoldAttrs {
public:
  explicit NodeAttrs(const onnx::NodeProto &n) : node(n) {}
  const onnx::AttributeProto *get(llvm::StringRef name) const;
  std::optional<int64_t> getInt(llvm::StringRef name) const override;
  /// A float attribute as the shortest double that rounds to the same float.
  std::optional<double> getFloat(llvm::StringRef name) const;
  std::optional<std::string> getString(llvm::StringRef name) const;
  std::optional<std::vector<int64_t>>
  getInts(llvm::StringRef name) const override;
  const onnx::TensorProto *getTensor(llvm::StringRef name) const override;

private:
  const onnx::NodeProto &node;
};

class Importer {
public:
  Importer(mlir::MLIRContext *ctx, llvm::StringRef filename,
           const OnnxImportOptions &opts);

  mlir::OwningOpRef<mlir::ModuleOp> run(llvm::StringRef bytes);

  // --- state the converters use
  mlir::MLIRContext *ctx;
  mlir::OpBuilder b; // layer ops, at the end of the body
  /// The opset the converters see: kTargetOpset after a successful version
  /// conversion, else the model's own.
  int64_t opset = kTargetOpset;

  // --- diagnostics and locations
  mlir::Location nodeLoc(const onnx::NodeProto &n);
  mlir::Location nameLoc(llvm::StringRef name);
  mlir::InFlightDiagnostic nodeError(const onnx::NodeProto &n);

  // --- values
  Entry *lookup(llvm::StringRef name) {
    auto it = env.find(name);
    return it == env.end() ? nullptr : &it->second;
  }
  /// The value of tensor `name`; constants are materialized with
  /// `constElemType` when given (so they take the type of the other operand).
  mlir::FailureOr<mlir::Value> tensorOf(llvm::StringRef name,
                                        mlir::Location loc,
                                        mlir::Type constElemType = {});
  mlir::FailureOr<mlir::Value> initValue(const onnx::TensorProto &t);
  /// The folded value of `name`: our own folding or a decoded integer
  /// initializer.
  const ConstTensor *constOf(llvm::StringRef name);
  /// constOf, or the values of a floating-point initializer the file
  /// carries: for inputs that can only be constants (Resize's scales),
  /// which torch 2's dynamo exporter writes as initializers. Never for an
  /// input that may be a parameter (constOf keeps those out of folding).
  const ConstTensor *constOrInitializerOf(llvm::StringRef name);
  mlir::Value materialize(const ConstTensor &c, mlir::Type elemType,
                          mlir::Location loc);
  void setTensor(llvm::StringRef name, mlir::Value v);
  void setConst(llvm::StringRef name, ConstTensor c);
  void setEntry(llvm::StringRef name, const Entry &e) { env[name] = e; }
  bool isConsumed(llvm::StringRef name) const {
    return consumers.count(name) || graphOutputs.count(name);
  }
  bool isGraphOutput(llvm::StringRef name) const {
    return graphOutputs.count(name);
  }
  bool isInitializer(llvm::StringRef name) const { return inits.count(name); }
  bool isBufferInit(llvm::StringRef name, const onnx::TensorProto &t);
  mlir::FailureOr<mlir::Type> elementType(int32_t dtype, mlir::Location loc,
                                          llvm::StringRef what);
  /// Restores a parameter that torch.onnx deduplicated under its own name.
  void restoreInitializer(const onnx::TensorProto &t, llvm::StringRef name);

  /// Creates an op whose result type the op infers, checking the inference
  /// first so that bad shapes give a diagnostic instead of a fatal error.
  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> make(mlir::Location loc, Args &&...args) {
    return createInferredOp<OpTy>(
        b, loc,
        [&](llvm::StringRef opName, const std::string &reason) {
          reportBuildFailure(loc, opName, reason);
        },
        std::forward<Args>(args)...);
  }

  /// `v` reshaped to `shape` (the copy PyTorch makes when the strides cannot
  /// express the view is vram-insert-contiguous's, after the import).
  mlir::FailureOr<mlir::Value>
  reshapeTo(mlir::Value v, llvm::ArrayRef<int64_t> shape, mlir::Location loc);

  void warnIfInferenceExport(const onnx::ModelProto &model);

private:
  void reportBuildFailure(mlir::Location loc, llvm::StringRef opName,
                          const std::string &reason);
  mlir::LogicalResult prepareGraph(const onnx::ModelProto &model);
  mlir::LogicalResult collectInitializers();
  mlir::LogicalResult checkGraphInputs();
  mlir::LogicalResult sortNodes();
  mlir::LogicalResult validateNodes(const onnx::ModelProto &model);
  void convertToTargetOpset(onnx::ModelProto &model, int64_t modelOpset);
  void inferShapes(const onnx::ModelProto &model,
                   llvm::ArrayRef<mlir::RankedTensorType> argTypes);
  mlir::FailureOr<mlir::RankedTensorType>
  inputType(const onnx::ValueInfoProto &vi);
  mlir::LogicalResult emitNode(const onnx::NodeProto &n);
  mlir::LogicalResult checkInferredShapes(const onnx::NodeProto &n);
  void resetGraphState();

  std::string filename;
  const OnnxImportOptions &opts;
  /// What folded constants hold, against opts.maxFoldedElements.
  FoldBudget foldBudget;
  /// The batch size --batch bound to a symbolic dimension, if any.
  std::optional<int64_t> boundBatch;
  /// Symbolic dims bound to a default value (warned about once each).
  llvm::StringSet<> defaultBoundDims;
  mlir::Operation *lastInitOp = nullptr;
  mlir::Location fileLoc;
  const onnx::GraphProto *graph = nullptr;

  llvm::StringMap<Entry> env;
  llvm::StringMap<const onnx::TensorProto *> inits;
  llvm::StringMap<const onnx::NodeProto *> producer;
  llvm::StringMap<llvm::SmallVector<const onnx::NodeProto *, 2>> consumers;
  llvm::SmallVector<const onnx::NodeProto *> order;
  llvm::StringSet<> graphOutputs;
  llvm::StringSet<> bnStats;
  std::vector<llvm::GlobPattern> bufferGlobs;
  llvm::StringMap<mlir::Value> initValues;
  /// Parameters that torch.onnx deduplicated (eval-mode export of equal
  /// initial values) and restored under their own name (stable addresses).
  std::deque<onnx::TensorProto> restoredInits;
  /// libonnx shape inference on the model with the bound input shapes: the
  /// static shapes of node outputs, checked against the converted values.
  llvm::StringMap<llvm::SmallVector<int64_t, 4>> inferredShapes;
};

/// A node as its converter sees it: operands, attributes with defaults,
/// results, and the importer's builder.
class OpBinder {
public:
  OpBinder(Importer &im, const onnx::NodeProto &n)
      : im(im), node(n), attrs(n), loc(im.nodeLoc(n)) {}

  Importer &im;
  const onnx::NodeProto &node;
  NodeAttrs attrs;
  mlir::Location loc;

  mlir::OpBuilder &builder() { return im.b; }
  llvm::StringRef opType() const { return node.op_type(); }
  int64_t opset() const { return im.opset; }
  mlir::InFlightDiagnostic error() { return im.nodeError(node); }

  // --- operands
  bool hasInput(int idx) const {
    return idx < node.input_size() && !node.input(idx).empty();
  }
  llvm::StringRef inputName(int idx) const { return node.input(idx); }
  Entry *inputEntry(int idx) {
    return hasInput(idx) ? im.lookup(node.input(idx)) : nullptr;
  }
  /// Input `idx` as a value (an error when it is absent).
  mlir::FailureOr<mlir::Value> tensor(int idx, mlir::Type constElemType = {});
  /// Input `idx`, or a null value when the optional input is absent.
  mlir::FailureOr<mlir::Value> optionalTensor(int idx);
  /// Input `idx` when it folded to a constant, else null.
  const ConstTensor *constInput(int idx) {
    return hasInput(idx) ? im.constOf(node.input(idx)) : nullptr;
  }
  /// Input `idx` of an op that reads it as a constant only: a folded
  /// constant or an initializer's values (Importer::constOrInitializerOf).
  const ConstTensor *constOnlyInput(int idx) {
    return hasInput(idx) ? im.constOrInitializerOf(node.input(idx)) : nullptr;
  }
  /// A constant scalar input, or the attribute `attr` of older opsets, or
  /// `dflt`; an error (failure) when the input is present but not constant.
  mlir::FailureOr<std::optional<double>>
  scalarInputOrAttr(int idx, llvm::StringRef attr,
                    std::optional<double> dflt = std::nullopt);
  /// Integer list from input `idx` (newer opsets) or attribute `attr`.
  mlir::FailureOr<std::optional<std::vector<int64_t>>>
  intsInputOrAttr(int idx, llvm::StringRef attr);

  // --- attributes
  int64_t intAttr(llvm::StringRef name, int64_t dflt) const {
    return attrs.getInt(name).value_or(dflt);
  }
  double floatAttr(llvm::StringRef name, double dflt) const {
    return attrs.getFloat(name).value_or(dflt);
  }
  std::string stringAttr(llvm::StringRef name, llvm::StringRef dflt) const {
    return attrs.getString(name).value_or(dflt.str());
  }
  std::optional<std::vector<int64_t>> intsAttr(llvm::StringRef name) const {
    return attrs.getInts(name);
  }

  // --- results
  int numOutputs() const { return node.output_size(); }
  /// Whether output `idx` exists and something reads it.
  bool outputUsed(int idx) const {
    return idx < node.output_size() && !node.output(idx).empty() &&
           im.isConsumed(node.output(idx));
  }
  void setResult(int idx, mlir::Value v) {
    if (idx < node.output_size() && !node.output(idx).empty())
      im.setTensor(node.output(idx), v);
  }
  void setResultEntry(int idx, const Entry &e) {
    if (idx < node.output_size() && !node.output(idx).empty())
      im.setEntry(node.output(idx), e);
  }

  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> make(Args &&...args) {
    return im.make<OpTy>(loc, std::forward<Args>(args)...);
  }
  /// Builds an op of `OpTy` and binds it to output 0.
  template <typename OpTy, typename... Args>
  mlir::LogicalResult makeResult(Args &&...args) {
    auto r = im.make<OpTy>(loc, std::forward<Args>(args)...);
    if (mlir::failed(r))
      return mlir::failure();
    setResult(0, *r);
    return mlir::success();
  }
};

bool isFloatTensor(mlir::Value v);
/// a * b, saturating instead of overflowing.
int64_t mulSat(int64_t a, int64_t b);

} // namespace vram::onnx_import

#endif // VRAM_LIB_IMPORT_ONNX_IMPORTER_H
