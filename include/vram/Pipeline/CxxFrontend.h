//===- CxxFrontend.h - the C++ front end as a loadable module ---*- C++ -*-===//
//
// The LibTorch C++ front end links libclang-cpp, which costs every run of
// vram-opt its load time although few runs read C++. It is therefore built
// as a module (VramCxxFrontend.so) that vram-opt loads when a C++ input
// needs it: the module holds Clang's parser and the importer, and resolves
// the dialect, the pipeline and MLIR against the executable that loads it
// (vram-opt exports its symbols), so both share one copy of each.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_PIPELINE_CXXFRONTEND_H
#define VRAM_PIPELINE_CXXFRONTEND_H

#include "vram/Pipeline/ModelSource.h"

namespace vram {

/// createCxxSource as the module implements it.
using CreateCxxSourceFn = llvm::Expected<std::unique_ptr<ModelSource>> (*)(
    mlir::MLIRContext *context, CxxModelOptions options);

/// The module's one exported symbol: returns its createCxxSource.
inline constexpr const char *kCxxFrontendEntry = "vramCxxFrontendEntry";

} // namespace vram

extern "C" vram::CreateCxxSourceFn vramCxxFrontendEntry();

#endif // VRAM_PIPELINE_CXXFRONTEND_H
