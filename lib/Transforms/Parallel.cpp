//===- Parallel.cpp - one rank's step of a data-parallel job --------------===//
//
// DistributedDataParallel (torch/nn/parallel/distributed.py and the C++
// Reducer) wraps a model whose every rank holds all of it. At construction
// the reducer allocates flat gradient buckets; after the first iteration it
// rebuilds them in the order the gradients became ready, with the limits
// [first_bucket_bytes_cap, bucket_bytes_cap] (1 MiB, then 25 MiB by
// default): per dtype, parameters join the open bucket in ready order and
// the bucket closes as soon as it holds at least the current limit
// (compute_bucket_assignment_by_size). The buckets then live as long as the
// model. Each finished gradient is written into its bucket (scaled by
// 1/world_size), the bucket is all-reduced in place, and copied back into
// `.grad`; with gradient_as_bucket_view `.grad` is the bucket view itself and
// the gradient autograd produced is dropped once copied.
//
// On the step: a gradient is ready when the op that finishes it runs (the
// value the optimizer reads), so the ready order is the order of those ops.
// The buckets become `nn.grad_bucket` ops (persistent gradients) at the top
// of `@step`; the step gets `nn.parallel`, which the memory analysis reads
// for the bucket view. Measured against torch 2.15 with gloo on the CPU:
// benchmarks/accuracy/ddp.py.
//
//===----------------------------------------------------------------------===//

#include "vram/Analysis/StepInfo.h"
#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Dialect/NN/NNOps.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

namespace vram {
#define GEN_PASS_DEF_PARALLEL
#include "vram/Transforms/Passes.h.inc"
} // namespace vram

using namespace mlir;
using namespace vram;
using namespace vram::nn;

namespace {

/// A gradient the reducer buckets: its parameter's name, its type and the
/// position of the op that finishes it.
struct ReadyGradient {
  std::string param;
  RankedTensorType type;
  unsigned readyAt;
};

/// A bucket being filled or closed: the parameters it holds, in order.
struct Bucket {
  Type elementType;
  SmallVector<Attribute> params;
  int64_t elements = 0, bytes = 0;
};

struct ParallelPass : public vram::impl::ParallelBase<ParallelPass> {
  using ParallelBase::ParallelBase;

  void runOnOperation() override;
};

} // namespace

void ParallelPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto step = module.lookupSymbol<func::FuncOp>(entry);
  if (!step || step.isExternal() || !step.getBody().hasOneBlock()) {
    emitError(module.getLoc()) << "vram-parallel needs a built step @" << entry
                               << " (run vram-build-step first)";
    return signalPassFailure();
  }
  if (dp < 1 || bucketCap < 1 || firstBucket < 1) {
    emitError(step.getLoc())
        << "vram-parallel needs dp >= 1 and bucket sizes >= 1 byte, got dp="
        << static_cast<int64_t>(dp)
        << " bucket-cap=" << static_cast<int64_t>(bucketCap)
        << " first-bucket=" << static_cast<int64_t>(firstBucket);
    return signalPassFailure();
  }
  if (step->hasAttr(NNDialect::kParallelAttrName)) {
    step.emitError() << "the step is already parallel ('"
                     << NNDialect::kParallelAttrName << "')";
    return signalPassFailure();
  }
  MLIRContext *ctx = &getContext();
  step->setAttr(NNDialect::kParallelAttrName,
                ParallelAttr::get(ctx, dp, bucketCap, firstBucket, bucketView));
  if (getStepMode(step) != StepMode::Train)
    return;

  Block &body = step.getBody().front();
  DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(body))
    position[&op] = i;
  std::vector<ReadyGradient> ready;
  for (auto update : body.getOps<OptimizerStepOp>())
    for (auto [param, grad] :
         llvm::zip(update.getParams(), update.getGrads())) {
      std::string name = "?";
      if (auto owner = param.getDefiningOp<PersistentStorageOpInterface>())
        name = owner.getStorageName();
      Operation *def = grad.getDefiningOp();
      ready.push_back({name, cast<RankedTensorType>(grad.getType()),
                       def ? position.lookup(def) : 0});
    }
  std::stable_sort(ready.begin(), ready.end(),
                   [](const ReadyGradient &a, const ReadyGradient &b) {
                     return a.readyAt < b.readyAt;
                   });

  // compute_bucket_assignment_by_size over the ready order, one open bucket
  // and one limit per dtype.
  std::vector<Bucket> closed;
  llvm::MapVector<Type, std::pair<Bucket, bool>> open; // bucket, past first
  for (const ReadyGradient &g : ready) {
    std::optional<int64_t> bytes = getTensorBytes(g.type);
    auto &[bucket, pastFirst] = open[g.type.getElementType()];
    bucket.elementType = g.type.getElementType();
    bucket.params.push_back(StringAttr::get(ctx, g.param));
    if (!bytes ||
        llvm::AddOverflow(bucket.elements, g.type.getNumElements(),
                          bucket.elements) ||
        llvm::AddOverflow(bucket.bytes, *bytes, bucket.bytes)) {
      step.emitError() << "the gradient bucket holding '" << g.param
                       << "' does not fit in 64 bits";
      return signalPassFailure();
    }
    if (bucket.bytes >= (pastFirst ? bucketCap : firstBucket)) {
      closed.push_back(std::move(bucket));
      bucket = Bucket();
      pastFirst = true;
    }
  }
  for (auto &entry : open)
    if (!entry.second.first.params.empty())
      closed.push_back(std::move(entry.second.first));

  OpBuilder builder = OpBuilder::atBlockBegin(&body);
  for (auto [i, bucket] : llvm::enumerate(closed))
    builder.create<GradBucketOp>(
        step.getLoc(),
        RankedTensorType::get({bucket.elements}, bucket.elementType),
        builder.getStringAttr("ddp.bucket" + std::to_string(i)),
        builder.getArrayAttr(bucket.params));
  numBuckets += closed.size();
}
