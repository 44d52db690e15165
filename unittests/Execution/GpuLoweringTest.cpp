//===- GpuLoweringTest.cpp - kernels the driver could not load ------------===//
//
// verifyKernelsLinked on PTX written by hand: the form NVPTX gives a call to
// libdevice that was not linked (an `.extern .func` declaration), and the
// same module with the function defined.
//
//===----------------------------------------------------------------------===//

#include "vram/Execution/GpuLowering.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

std::string binaryWith(llvm::StringRef ptx) {
  return (llvm::Twine(R"mlir(
module attributes {gpu.container_module} {
  gpu.binary @step_kernels [#gpu.object<#nvvm.target<chip = "sm_90">, assembly = ")mlir") +
          ptx + "\">]\n}\n")
      .str();
}

class GpuLoweringTest : public ::testing::Test {
protected:
  GpuLoweringTest() {
    context.loadDialect<gpu::GPUDialect, NVVM::NVVMDialect>();
  }

  /// The error verifyKernelsLinked reports for `ptx`, or "" when none.
  std::string check(llvm::StringRef ptx) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(binaryWith(ptx), &context);
    EXPECT_TRUE(module);
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
      message = d.str();
      return success();
    });
    bool ok = succeeded(vram::verifyKernelsLinked(*module, "/opt/cuda"));
    EXPECT_EQ(ok, message.empty());
    return message;
  }

  MLIRContext context;
};

TEST_F(GpuLoweringTest, UndefinedLibdeviceCallIsAnError) {
  std::string message =
      check(".version 8.0\\0A.target sm_90\\0A.extern .func  (.param .b32 "
            "func_retval0) __nv_sqrtf\\0A(\\0A.param .b32 __nv_sqrtf_param_0"
            "\\0A);\\0A.visible .entry step_kernel() { ret; }\\0A");
  EXPECT_EQ(message,
            "kernel module 'step_kernels' calls '__nv_sqrtf', which nothing "
            "defines: the driver would not load it (libdevice was not found "
            "under '/opt/cuda/nvvm/libdevice'; set CUDA_HOME to a CUDA "
            "toolkit)");
}

TEST_F(GpuLoweringTest, DefinedFunctionsPass) {
  EXPECT_EQ(check(".version 8.0\\0A.target sm_90\\0A.func  (.param .b32 "
                  "func_retval0) __nv_sqrtf(.param .b32 x) { ret; }\\0A"
                  ".visible .entry step_kernel() { ret; }\\0A"),
            "");
}

} // namespace
