//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes NumPy's .npy format (versions 1.0-3.0, C order, little
// endian), for the validation's inputs (--input-data) and outputs (--dump).
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_EXECUTION_NPY_H
#define VRAM_EXECUTION_NPY_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace vram {

struct NpyArray {
  /// NumPy's dtype string, e.g. "<f4", "<i8".
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<char> data;
};

/// Reads `path`; an error names the file and what is wrong with it.
llvm::Expected<NpyArray> readNpy(llvm::StringRef path);

/// Parses the contents of a .npy file named `name` (for messages).
llvm::Expected<NpyArray> parseNpy(llvm::StringRef contents,
                                  llvm::StringRef name);

/// Writes a C-order array as a version 1.0 .npy file.
llvm::Error writeNpy(llvm::StringRef path, llvm::StringRef descr,
                     llvm::ArrayRef<int64_t> shape, const void *data,
                     size_t bytes);

/// "(2, 3)" as NumPy prints a shape.
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace vram

#endif // VRAM_EXECUTION_NPY_H
