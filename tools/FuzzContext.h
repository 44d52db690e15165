//===- FuzzContext.h - the MLIR context the fuzz targets share --*- C++ -*-===//
//
// Single-threaded (libFuzzer runs one input at a time), the nn and func
// dialects loaded, diagnostics swallowed: a fuzz target checks that a reader
// fails cleanly, not what it says.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_TOOLS_FUZZCONTEXT_H
#define VRAM_TOOLS_FUZZCONTEXT_H

#include "vram/Dialect/NN/NNDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>

namespace vram {
inline std::unique_ptr<mlir::MLIRContext> makeFuzzContext() {
  mlir::DialectRegistry registry;
  registry.insert<nn::NNDialect, mlir::func::FuncDialect>();
  auto ctx = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
  ctx->loadAllAvailableDialects();
  ctx->getDiagEngine().registerHandler(
      [](mlir::Diagnostic &) { return mlir::success(); });
  return ctx;
}
} // namespace vram

#endif // VRAM_TOOLS_FUZZCONTEXT_H
