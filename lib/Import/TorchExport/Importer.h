//===- Importer.h - the core of the torch.export importer -------*- C++ -*-===//
//
// The importer's core, shared by the ATen op converters: it reads the
// ExportedProgram (graph signature, tensor metadata, symbols), keeps the
// values of the graph's names, locates each node, and hands it to the
// converter that ConverterTable registers for its target. Converters read
// their node through a NodeBinder, by the schema's argument names.
//
// Internal to lib/Import/TorchExport.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_TORCHEXPORT_IMPORTER_H
#define VRAM_LIB_IMPORT_TORCHEXPORT_IMPORTER_H

#include "vram/Dialect/NN/NNOps.h"
#include "vram/Import/InferredOp.h"
#include "vram/Import/TorchExport.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace vram::torch_export {

class Importer;

/// One node's arguments, read by their schema names ("input", "stride");
/// an argument the node gives but its converter never read is an error
/// (NodeBinder::finish), so no argument is silently ignored.
class NodeBinder {
public:
  NodeBinder(Importer &importer, const llvm::json::Object &node,
             llvm::StringRef nodeName, llvm::StringRef target,
             mlir::Location loc);

  mlir::Location getLoc() const { return loc; }
  mlir::OpBuilder &getBuilder();
  mlir::MLIRContext *getContext();
  const nn::TorchTarget &getTorchTarget() const;
  /// An error at the node, naming it and its op.
  mlir::InFlightDiagnostic error();

  /// Whether argument `name` is given and not None.
  bool has(llvm::StringRef name);
  mlir::FailureOr<mlir::Value> tensor(llvm::StringRef name);
  /// A null Value when the argument is absent or None.
  mlir::FailureOr<mlir::Value> optionalTensor(llvm::StringRef name);
  mlir::FailureOr<llvm::SmallVector<mlir::Value>> tensors(llvm::StringRef name);
  /// An int, a symbolic int (its bound value) or, absent, `fallback`.
  mlir::FailureOr<int64_t>
  integer(llvm::StringRef name, std::optional<int64_t> fallback = std::nullopt);
  /// None (or absent) as std::nullopt.
  mlir::FailureOr<std::optional<int64_t>> optionalInteger(llvm::StringRef name);
  mlir::FailureOr<llvm::SmallVector<int64_t>>
  integers(llvm::StringRef name,
           std::optional<llvm::ArrayRef<int64_t>> fallback = std::nullopt);
  mlir::FailureOr<double> real(llvm::StringRef name,
                               std::optional<double> fallback = std::nullopt);
  /// A list of floats; None (or absent) as std::nullopt.
  mlir::FailureOr<std::optional<llvm::SmallVector<double>>>
  optionalReals(llvm::StringRef name);
  mlir::FailureOr<bool> boolean(llvm::StringRef name,
                                std::optional<bool> fallback = std::nullopt);
  mlir::FailureOr<std::string>
  string(llvm::StringRef name,
         std::optional<llvm::StringRef> fallback = std::nullopt);
  /// A tensor, or a Python number as the wrapped-number constant PyTorch
  /// makes of it, in `elementType`.
  mlir::FailureOr<mlir::Value> tensorOrNumber(llvm::StringRef name,
                                              mlir::Type elementType);
  /// Marks arguments that change nothing the analysis models (a device, a
  /// layout, a memory format asked to stay contiguous) as read.
  void ignore(llvm::StringRef name) { consumed.insert(name); }

  /// Binds the output of an op that computes without autograd (masks and
  /// positions from integer ops, tables from buffers): a new tensor of the
  /// type the archive records, made as a constant (its memory is what
  /// matters; nothing keeps it for backward). Fails when a tensor argument
  /// requires grad: then the op needs a real converter.
  mlir::LogicalResult setNoGradResult();
  /// The same for factories that read only their operand's dtype and sizes
  /// (new_zeros, zeros_like): their result never requires grad, whatever
  /// the operand.
  mlir::LogicalResult setFactoryResult();
  /// Whether `v` depends on a trainable parameter.
  bool requiresGrad(mlir::Value v);

  /// Builds OpTy with its inferred result type, or reports why not.
  template <typename OpTy, typename... Args>
  mlir::FailureOr<mlir::Value> make(Args &&...args) {
    return createInferredOp<OpTy>(
        getBuilder(), loc,
        [&](llvm::StringRef opName, const std::string &reason) {
          error() << "cannot build " << opName << ": "
                  << (reason.empty() ? "its operands are not valid" : reason);
        },
        std::forward<Args>(args)...);
  }
  /// `v` as `shape` (a view; vram-insert-contiguous adds the copy PyTorch's
  /// reshape makes when the strides cannot express it).
  mlir::FailureOr<mlir::Value> reshape(mlir::Value v,
                                       llvm::ArrayRef<int64_t> shape);

  /// The type the archive records for the node's single tensor output
  /// (for ops whose result only the metadata determines, as aten.empty).
  mlir::FailureOr<mlir::RankedTensorType> resultType();

  /// Binds the node's single tensor output (checked against its metadata).
  mlir::LogicalResult setResult(mlir::Value v);
  /// Binds a node whose output is a list of tensors.
  mlir::LogicalResult setResults(llvm::ArrayRef<mlir::Value> values);
  /// Binds a symbolic-int output.
  mlir::LogicalResult setInteger(int64_t value);
  /// Whether the node's output is used by nothing (e.g. a dead getitem).
  bool isNoneResult() const;

  /// Fails on an argument the converter did not read.
  mlir::LogicalResult finish();

private:
  const llvm::json::Object *argument(llvm::StringRef name);
  mlir::LogicalResult setConstantResult(bool checkGrad);

  Importer &importer;
  const llvm::json::Object &node;
  llvm::StringRef nodeName, target;
  mlir::Location loc;
  llvm::StringSet<> consumed;
  bool resultSet = false;
};

class Importer {
public:
  Importer(mlir::MLIRContext *context, llvm::StringRef filename,
           const ExportImportOptions &options);

  /// Imports the archive in `bytes`.
  mlir::OwningOpRef<mlir::ModuleOp> run(llvm::StringRef bytes);
  /// Imports a serialized ExportedProgram (the archive's `entryName`), as
  /// the fuzzer does without the zip around it.
  mlir::OwningOpRef<mlir::ModuleOp>
  runProgram(llvm::StringRef entryName, llvm::StringRef json,
             std::optional<llvm::StringRef> weightsConfig = std::nullopt);

  mlir::MLIRContext *ctx;
  mlir::OpBuilder b;
  const ExportImportOptions &opts;

  /// The value of graph name `name` (a parameter or buffer is created on its
  /// first use).
  mlir::FailureOr<mlir::Value> valueOf(llvm::StringRef name,
                                       mlir::Location loc);
  /// The bound value of symbolic int `name`.
  std::optional<int64_t> symbolicInt(llvm::StringRef name) const;
  void setValue(llvm::StringRef name, mlir::Value v) { values[name] = v; }
  void setSymbolicInt(llvm::StringRef name, int64_t v) { symInts[name] = v; }
  /// Checks `v` against the metadata of tensor `name` (dtype, and each size
  /// the bound symbols determine).
  mlir::LogicalResult checkMetadata(llvm::StringRef name, mlir::Value v,
                                    mlir::Location loc);
  mlir::FailureOr<mlir::Type> elementType(int64_t scalarType,
                                          mlir::Location loc);
  /// The value of a size in the schema ({"as_int": 3} or {"as_expr": ...})
  /// under the bound symbols; nullopt when it is not determined.
  std::optional<int64_t> evaluateSize(const llvm::json::Value &size) const;
  /// The type tensor `name`'s metadata gives under the bound symbols.
  mlir::FailureOr<mlir::RankedTensorType> tensorType(llvm::StringRef name,
                                                     mlir::Location loc);

private:
  mlir::LogicalResult readSignature(const llvm::json::Object &signature);
  mlir::LogicalResult bindSymbols();
  mlir::LogicalResult convertNode(const llvm::json::Object &node,
                                  unsigned index);
  mlir::Location nodeLocation(const llvm::json::Object &node,
                              llvm::StringRef nodeName);

  std::string filename;
  mlir::Location fileLoc;
  const llvm::json::Object *graph = nullptr;
  const llvm::json::Object *tensorValues = nullptr;
  const llvm::json::Object *rangeConstraints = nullptr;

  struct Input {
    std::string name;     ///< the graph's name
    std::string fullName; ///< parameter/buffer name ("layer1.0.conv1.weight")
    enum Kind { User, Parameter, Buffer } kind;
  };
  std::vector<Input> inputs;
  llvm::StringMap<const Input *> stateByName;
  std::vector<std::string> outputNames;

  llvm::StringMap<mlir::Value> values;
  /// The weight file of each parameter (the weights config); parameters in
  /// one file are one tensor (tied weights), built once.
  llvm::StringMap<std::string> weightFileOf;
  llvm::StringMap<mlir::Value> parameterInFile;
  /// NodeBinder::requiresGrad's answers.
  llvm::DenseMap<mlir::Value, bool> gradMemo;
  llvm::StringMap<int64_t> symInts; ///< symbolic ints computed by nodes
  llvm::StringMap<int64_t> symbols; ///< bound size symbols (s0, s77)
  std::optional<int64_t> boundBatch;
  bool warnedEvalMode = false;
  friend class NodeBinder;
};

} // namespace vram::torch_export

#endif // VRAM_LIB_IMPORT_TORCHEXPORT_IMPORTER_H
