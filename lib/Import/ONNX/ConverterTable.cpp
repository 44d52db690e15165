//===- ConverterTable.cpp - ONNX op converters by op type and opset -------===//

#include "ConverterTable.h"

#include "ConstTensor.h"

#include "vram/Import/ONNX.h"

#include "llvm/ADT/STLExtras.h"

#include <cassert>

using namespace vram::onnx_import;

void ConverterTable::onOp(llvm::StringRef opType, int64_t sinceVersion,
                          ConverterFn fn) {
  auto &versions = converters[opType];
  if (versions.empty()) {
    auto it = llvm::lower_bound(sortedOpTypes, opType);
    sortedOpTypes.insert(it, converters.find(opType)->getKey());
  }
  assert(llvm::none_of(versions,
                       [&](const Versioned &v) {
                         return v.sinceVersion == sinceVersion;
                       }) &&
         "two converters for one op type and opset");
  versions.push_back({sinceVersion, std::move(fn)});
  llvm::sort(versions, [](const Versioned &a, const Versioned &b) {
    return a.sinceVersion < b.sinceVersion;
  });
}

const ConverterFn *ConverterTable::lookup(llvm::StringRef opType,
                                          int64_t opset) const {
  auto it = converters.find(opType);
  if (it == converters.end())
    return nullptr;
  const ConverterFn *found = nullptr;
  for (const Versioned &v : it->second)
    if (v.sinceVersion <= opset)
      found = &v.fn;
  return found;
}

int64_t ConverterTable::firstVersion(llvm::StringRef opType) const {
  auto it = converters.find(opType);
  return it == converters.end() ? 0 : it->second.front().sinceVersion;
}

const ConverterTable &ConverterTable::get() {
  // Built in place: opTypes() refers to the keys of `converters`.
  static const ConverterTable *table = [] {
    auto *t = new ConverterTable();
    registerConvPoolConverters(*t);
    registerNormConverters(*t);
    registerMatMulConverters(*t);
    registerElementwiseConverters(*t);
    registerShapeConverters(*t);
    registerReductionConverters(*t);
    registerRecurrentConverters(*t);
    return t;
  }();
  return *table;
}

llvm::ArrayRef<llvm::StringRef> vram::onnx_import::supportedOps() {
  return ConverterTable::get().opTypes();
}

llvm::ArrayRef<llvm::StringRef> vram::onnx_import::foldOnlyOps() {
  static const llvm::SmallVector<llvm::StringRef> ops = [] {
    llvm::SmallVector<llvm::StringRef> r;
    const ConverterTable &table = ConverterTable::get();
    for (llvm::StringRef op : foldableOps())
      if (!table.firstVersion(op))
        r.push_back(op);
    return r;
  }();
  return ops;
}
