//===- ConverterTable.cpp - ATen op converters by target ------------------===//

#include "ConverterTable.h"

#include "vram/Import/TorchExport.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace vram::torch_export;

void ConverterTable::on(llvm::StringRef target, ConverterFn fn) {
  bool inserted = converters.try_emplace(target, fn).second;
  assert(inserted && "two converters for one target");
  (void)inserted;
  llvm::StringRef key = converters.find(target)->getKey();
  sortedTargets.insert(llvm::lower_bound(sortedTargets, key), key);
}

const ConverterTable &ConverterTable::get() {
  // Built in place: targets() refers to the keys of `converters`.
  static const ConverterTable *table = [] {
    auto *t = new ConverterTable();
    registerLayerConverters(*t);
    registerElementwiseConverters(*t);
    registerShapeConverters(*t);
    return t;
  }();
  return *table;
}

llvm::ArrayRef<llvm::StringRef> vram::torch_export::supportedOps() {
  return ConverterTable::get().targets();
}
