//===- Archive.h - the PT2 archive's entries --------------------*- C++ -*-===//
//
// Internal to lib/Import/TorchExport.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_TORCHEXPORT_ARCHIVE_H
#define VRAM_LIB_IMPORT_TORCHEXPORT_ARCHIVE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>

namespace vram::torch_export {

/// The serialized ExportedProgram of a PT2 archive.
struct ArchiveModel {
  std::string entryName; ///< "net/models/model.json"
  std::string json;
  /// `<root>/data/weights/<model>_weights_config.json` when the archive has
  /// it: which weight file each parameter is stored in (tied parameters
  /// share one). Stripped archives keep it.
  std::optional<std::string> weightsConfig;
};

/// The largest entry read (the program's JSON), 1 GiB: the graph of an
/// 80-layer LLM with stack traces is tens of MiB.
constexpr uint64_t kMaxEntryBytes = uint64_t(1) << 30;

/// Reads the zip in `bytes`: its `archive_format` must say "pt2" and it must
/// hold one model (`<root>/models/<name>.json`; "model" when there are
/// several). Errors are plain messages for the caller to locate.
llvm::Expected<ArchiveModel> readArchiveModel(llvm::StringRef bytes);

} // namespace vram::torch_export

#endif // VRAM_LIB_IMPORT_TORCHEXPORT_ARCHIVE_H
