//===- vram-hf-fuzz.cpp - libFuzzer target for --hf's config reader -------===//
//
// Feeds arbitrary bytes to parseCausalLMConfig, the reader of a Hugging Face
// config.json. It must return a config or fail after one error diagnostic:
// never crash, hang or trip a sanitizer, and a config it returns must pass
// verifyCausalLMConfig (the builders rely on it).
//
//   vram-hf-fuzz -max_total_time=60 CORPUS_DIR [SEED_DIRS...]
//
//===----------------------------------------------------------------------===//

#include "vram/Import/HuggingFace.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::MLIRContext *context = new mlir::MLIRContext();
  unsigned errors = 0;
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++errors;
    return mlir::success();
  });
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::MemoryBufferRef buffer(text, "fuzz.json");
  mlir::FailureOr<vram::zoo::CausalLMConfig> config =
      vram::hf::parseCausalLMConfig(buffer, context);
  if (mlir::failed(config)) {
    if (errors != 1)
      std::abort(); // a failure is exactly one error
    return 0;
  }
  if (errors)
    std::abort(); // errors but a config
  if (llvm::Error error = vram::zoo::verifyCausalLMConfig(*config)) {
    llvm::consumeError(std::move(error));
    std::abort(); // a config the builders would reject
  }
  return 0;
}
