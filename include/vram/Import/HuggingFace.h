//===- HuggingFace.h - models from a transformers config.json --*- C++ -*-===//
//
// `vram-opt --hf=DIR_OR_CONFIG_JSON` builds a model from its Hugging Face
// config alone (no weights, no Python): config.json names the family
// (`model_type`) and its sizes, and the family's layout (vram/Zoo/CausalLM.h)
// builds the model as transformers' modeling code runs it.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_IMPORT_HUGGINGFACE_H
#define VRAM_IMPORT_HUGGINGFACE_H

#include "vram/Zoo/CausalLM.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBufferRef.h"

namespace vram::hf {

/// The `model_type`s a config may name.
llvm::ArrayRef<llvm::StringRef> getSupportedModelTypes();

/// Reads a config.json. Errors (malformed JSON, an unsupported model_type or
/// architecture, a missing or mistyped field, inconsistent sizes) are
/// emitted as one diagnostic located in the file (the key's line and column)
/// and yield failure. Warnings name what the model's memory may miss.
mlir::FailureOr<zoo::CausalLMConfig>
parseCausalLMConfig(llvm::MemoryBufferRef config, mlir::MLIRContext *context);

} // namespace vram::hf

#endif // VRAM_IMPORT_HUGGINGFACE_H
