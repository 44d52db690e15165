//===- CpuRunner.h - run a built step on the CPU, measured ------*- C++ -*-===//
//
// Validation by execution: the step is lowered (vram-lower-to-tensor with op
// markers), bufferized (one-shot, function boundaries), freed as PyTorch
// frees (vram-free-after-last-use), lowered to LLVM and run once with MLIR's
// ExecutionEngine. The module's heap allocation functions
// (_mlir_memref_to_llvm_alloc / _aligned_alloc / _free) are bound to an
// instrumented allocator that counts live bytes per op of the step; the
// step's arguments (inputs, parameters, buffers, optimizer state) are
// allocated through it first, as the memory analysis allocates persistent
// storage at step entry. The measured peak is compared with the memory
// analysis's prediction.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_EXECUTION_CPURUNNER_H
#define VRAM_EXECUTION_CPURUNNER_H

#include "vram/Dialect/NN/NNInterfaces.h"
#include "vram/Execution/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"

#include <memory>

#include <optional>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace vram {

/// Registers what the execution pipeline needs in a context: the upstream
/// dialects it lowers through, their bufferization models, the LLVM IR
/// translations, and the nn lowering models.
void registerExecutionDialects(mlir::DialectRegistry &registry);

/// The buffers of the executed step (docs/Execution.md).
enum class AllocationMode {
  /// One buffer per tensor PyTorch allocates, freed after the step op that
  /// last uses it (vram-free-after-last-use): must equal the prediction.
  PyTorch,
  /// MLIR's choice: vram-compiler-buffers, one-shot bufferization's in-place
  /// analysis, the ownership-based buffer deallocation pipeline and
  /// optimize-allocation-liveness.
  Compiler,
};

struct CpuValidationOptions {
  AllocationMode allocationMode = AllocationMode::PyTorch;
  /// What vram-vectorize-loops does to the loops before
  /// convert-linalg-to-loops (docs/Execution.md).
  enum class Loops {
    Naive,       ///< not run: convert-linalg-to-loops' loop nests
    Interchange, ///< window reductions moved outward (the default)
    Vectorize,   ///< also tile and vectorize (crashes resnet18 at 224 px)
    /// The GPU lowering's launches (buildGpuLaunchesPipeline), each run on
    /// the host one thread after another (--validate=gpu-emulated).
    GpuKernels,
  };
  Loops loops = Loops::Interchange;
  /// LLVM's optimizer tuned for the host CPU (its vector registers, for the
  /// loop and SLP vectorizers); false: no target machine, the generic cost
  /// model, which vectorizes nothing (the "before" of docs/Execution.md).
  bool tuneForHost = true;
  /// Optimizer hyperparameters of the lowered update.
  nn::LoweringOptions lowering;
  /// NAME -> .npy file: model inputs (by input name), "labels", and
  /// parameters or buffers (by name).
  llvm::StringMap<std::string> inputFiles;
  /// Values of parameters and buffers from the model file (ONNX
  /// initializers), by name; --input-data takes precedence.
  llvm::StringMap<NpyArray> initialValues;
  /// When set, the loss, every parameter gradient (NAME.grad.npy) and every
  /// updated parameter (NAME.npy) are written there.
  std::string dumpDir;
};

struct PhaseComparison {
  nn::StepPhase phase;
  int64_t measuredPeakBytes = 0;
  int64_t predictedPeakBytes = 0;
};

struct CpuValidationResult {
  int64_t measuredPeakBytes = 0;
  int64_t predictedPeakBytes = 0;
  std::vector<PhaseComparison> phases;
  /// Heap allocations made (arguments included).
  int64_t allocations = 0;
  /// The loss of the forward pass (a training step).
  std::optional<double> loss;
  /// Wall time of the step itself (JIT compilation excluded).
  double wallSeconds = 0;
  /// The first op of the step whose measured live bytes differ from the
  /// prediction, with both numbers.
  std::optional<unsigned> firstMismatchOp;
  std::string firstMismatchOpName;
  int64_t mismatchMeasured = 0, mismatchPredicted = 0;
};

/// One argument or result of the lowered step, and where its data is.
struct StepSlot {
  std::string name;
  std::string storage; ///< a MemoryCategory spelling; "" for results
  mlir::RankedTensorType type;
  void *data = nullptr;
};

/// The step lowered to tensors (vram-lower-to-tensor with op markers, the
/// step alone) and its signature: the front half of the CPU and GPU
/// runners.
struct TensorStep {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::vector<StepSlot> args, results;
};

/// The built `@step` of `module`, or a located error when there is none or
/// it cannot run yet (gradients kept across steps).
mlir::FailureOr<mlir::func::FuncOp> getRunnableStep(mlir::ModuleOp module);

/// Lowers `module`'s built `@step`; --input-data names that are neither an
/// input nor a parameter are errors.
mlir::FailureOr<TensorStep>
lowerStepToTensors(mlir::ModuleOp module, const CpuValidationOptions &options);

/// One-shot bufferization of a lowered step as the runners run it (function
/// boundaries, identity layouts, no alignment), after vram-compiler-buffers
/// when `compilerBuffers`; then drops the copies of a subview onto an
/// equal subview that in-place slices leave.
mlir::LogicalResult bufferizeStep(mlir::ModuleOp lowered, bool compilerBuffers);

/// JIT-compiles a step lowered to the LLVM dialect at LLVM O1 (tuned for
/// the host CPU when `tuneForHost`), binding the symbols `bindSymbols`
/// passes to its adder (the allocation functions, the op marker, a
/// runtime's entry points).
using JitSymbolAdder = llvm::function_ref<void(llvm::StringRef, void *)>;
mlir::FailureOr<std::unique_ptr<mlir::ExecutionEngine>>
createStepEngine(mlir::ModuleOp lowered, bool tuneForHost,
                 llvm::function_ref<void(JitSymbolAdder)> bindSymbols);

/// Fills each argument's host memory at `data`: --input-data, the model's
/// initializers, else the documented deterministic default; checks the
/// class indices of `labels` against `numClasses` (0: no cross-entropy).
mlir::LogicalResult initialiseArguments(mlir::Location loc,
                                        llvm::MutableArrayRef<StepSlot> args,
                                        const CpuValidationOptions &options,
                                        int64_t numClasses);

/// Writes `slot` (its host memory at `data`) as DIR/NAME.npy, creating DIR
/// (--dump).
mlir::LogicalResult dumpSlot(mlir::Location loc, llvm::StringRef dir,
                             const StepSlot &slot);

/// Bytes of one element of a tensor of `type`.
int64_t getElementBytes(mlir::Type type);

/// The classes of the cross-entropy whose target is the step's last
/// argument (the labels) in a training step, 0 if none.
int64_t getNumClasses(mlir::ModuleOp module);

/// Runs `module`'s `@step` once on the CPU. Fails with a located error on
/// an op that cannot be lowered, bad input data, or a JIT failure.
mlir::FailureOr<CpuValidationResult>
validateOnCpu(mlir::ModuleOp module, const CpuValidationOptions &options);

} // namespace vram

#endif // VRAM_EXECUTION_CPURUNNER_H
