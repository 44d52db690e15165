//===- InferInplace.cpp - the vram-onnx-infer-inplace pass ----------------===//
//
// PyTorch's in-place idioms that ONNX loses: torchvision writes
// `nn.ReLU(inplace=True)` after BatchNorm and after the residual
// `out += identity`. An op is taken as in place when its (first) input is
// the result of a batch_norm or an add that nothing else reads; this matches
// torchvision's ResNets and decides the memory that autograd saves (the
// result shares the input's storage). See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "vram/Import/Passes.h"

#include "vram/Dialect/NN/NNOps.h"

namespace vram::onnx_import {
#define GEN_PASS_DEF_ONNXINFERINPLACE
#include "vram/Import/Passes.h.inc"
} // namespace vram::onnx_import

using namespace mlir;
namespace nn = vram::nn;

namespace {

/// Whether `v` is the sole-use result of an op that torchvision follows with
/// an in-place op.
bool inplaceCandidate(Value v) {
  Operation *def = v.getDefiningOp();
  return def && isa<nn::BatchNormOp, nn::AddOp>(def) && v.hasOneUse();
}

struct OnnxInferInplacePass
    : vram::onnx_import::impl::OnnxInferInplaceBase<OnnxInferInplacePass> {
  using OnnxInferInplaceBase::OnnxInferInplaceBase;

  void runOnOperation() override {
    getOperation()->walk([&](Operation *op) {
      if (auto r = dyn_cast<nn::ReluOp>(op)) {
        if (relu && !r.getInplace() && inplaceCandidate(r.getInput())) {
          r.setInplace(true);
          ++numInplace;
        }
      } else if (auto a = dyn_cast<nn::AddOp>(op)) {
        // Only when the result keeps the lhs shape (`out += x` cannot grow
        // `out`).
        if (add && !a.getInplace() && inplaceCandidate(a.getLhs()) &&
            a.getLhs().getType() == a.getResult().getType()) {
          a.setInplace(true);
          ++numInplace;
        }
      }
    });
  }
};

} // namespace
