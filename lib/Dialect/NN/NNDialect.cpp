//===- NNDialect.cpp - the nn model dialect -------------------------------===//

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNAttributes.h"
#include "vram/Dialect/NN/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace vram::nn;

#include "vram/Dialect/NN/NNOpsDialect.cpp.inc"

#include "vram/Dialect/NN/NNEnums.cpp.inc"
#define GET_ATTRDEF_CLASSES
#include "vram/Dialect/NN/NNAttributes.cpp.inc"

void NNDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "vram/Dialect/NN/NNAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "vram/Dialect/NN/NNOps.cpp.inc"
      >();
}

/// The batch a front end bound is a dimension of the model's inputs (the
/// leading one, or another for a time-major ONNX graph): a function with
/// ranked inputs must have one with a dimension of that size.
static LogicalResult verifyBatchMatchesArguments(Operation *op, int64_t batch) {
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func)
    return success();
  SmallVector<RankedTensorType> inputs;
  for (Type type : func.getArgumentTypes())
    if (auto ranked = dyn_cast<RankedTensorType>(type))
      if (ranked.getRank() > 0)
        inputs.push_back(ranked);
  if (inputs.empty() || llvm::any_of(inputs, [&](RankedTensorType t) {
        return llvm::is_contained(t.getShape(), batch);
      }))
    return success();
  InFlightDiagnostic diag = op->emitError()
                            << "'" << NNDialect::kBatchAttrName << "' is "
                            << batch
                            << " but no input has a dimension of that size "
                               "(input shapes: ";
  llvm::interleaveComma(inputs, diag, [&](RankedTensorType t) {
    diag << "[";
    llvm::interleaveComma(t.getShape(), diag);
    diag << "]";
  });
  return diag << ")";
}

LogicalResult NNDialect::verifyOperationAttribute(Operation *op,
                                                  NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  auto expect = [&](bool ok, const Twine &what) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << name << "' must be " << what << ", got "
                           << value;
  };
  if (name == kModeAttrName)
    return expect(isa<StepModeAttr>(value), "a step mode (#nn<mode train>)");
  if (name == kPersistentGradsAttrName)
    return expect(isa<UnitAttr>(value), "a unit attribute");
  if (name == kModelAttrName)
    return expect(isa<StringAttr>(value), "a string");
  if (name == kBatchAttrName) {
    // A wider integer would be truncated where the batch is read.
    auto batch = dyn_cast<IntegerAttr>(value);
    if (failed(expect(batch && batch.getType().isSignlessInteger(64) &&
                          batch.getInt() > 0,
                      "a positive i64 integer")))
      return failure();
    return verifyBatchMatchesArguments(op, batch.getInt());
  }
  if (name == kSequenceLogitsAttrName)
    return expect(isa<UnitAttr>(value), "a unit attribute");
  if (name == kTorchVersionAttrName) {
    auto str = dyn_cast<StringAttr>(value);
    return expect(str && symbolizeTorchVersion(str.getValue()),
                  "a PyTorch version (" + enumSpellings<TorchVersion>() + ")");
  }
  if (name == kDeviceAttrName) {
    auto str = dyn_cast<StringAttr>(value);
    return expect(str && symbolizeDevice(str.getValue()),
                  "a device (" + enumSpellings<Device>() + ")");
  }
  if (name == kCudnnWorkspaceAttrName) {
    auto str = dyn_cast<StringAttr>(value);
    return expect(str && symbolizeCudnnWorkspace(str.getValue()),
                  "a cuDNN workspace assumption (" +
                      enumSpellings<CudnnWorkspace>() + ")");
  }
  if (name == kPhaseAttrName) {
    // Only a forward op can be recomputed; ops with a phase of their own
    // (backward nodes, the update) keep it.
    auto phase = dyn_cast<StepPhaseAttr>(value);
    if (failed(expect(phase && phase.getValue() == StepPhase::Recompute,
                      "#nn<phase recompute>")))
      return failure();
    return expect(!isa<StepPhaseOpInterface>(op),
                  "absent on an op with a phase of its own");
  }
  if (name == kAutocastAttrName) {
    auto type = dyn_cast<TypeAttr>(value);
    return expect(type && (type.getValue().isF16() || type.getValue().isBF16()),
                  "the autocast dtype (f16 or bf16)");
  }
  if (name == kGradViewsAttrName) {
    auto chains = dyn_cast<ArrayAttr>(value);
    bool ok = chains && llvm::all_of(chains, [](Attribute chain) {
                auto steps = dyn_cast<ArrayAttr>(chain);
                return steps && llvm::all_of(steps, [](Attribute step) {
                         return isa<DenseI64ArrayAttr, TypeAttr>(step);
                       });
              });
    return expect(ok, "an array of view chains (arrays of permutations and "
                      "tensor types)");
  }
  return op->emitError() << "unknown nn dialect attribute '" << name << "'";
}
