//===- vram-pt2-fuzz.cpp - libFuzzer target for the torch.export importer -===//
//
// Feeds arbitrary bytes to the .pt2 importer: an input that starts like a
// zip goes through the archive reader (importExportedProgram), any other is
// taken as the serialized ExportedProgram itself (the archive's
// models/model.json), since byte mutations of a zip rarely pass its CRCs.
// The importer must return a module or fail with diagnostics: never crash,
// hang or trip a sanitizer.
//
//   vram-pt2-fuzz -max_total_time=60 CORPUS_DIR [SEED_DIRS...]
//
// Symbolic batch and sequence sizes are bound to small values (--batch=2
// --seq=8) so that the work per input stays small; inputs over
// kMaxInputBytes are skipped.
//
//===----------------------------------------------------------------------===//

#include "../FuzzContext.h"
#include "Importer.h"

#include "vram/Import/TorchExport.h"

#include <cstddef>
#include <cstdint>

namespace {
constexpr size_t kMaxInputBytes = 1 << 18;
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > kMaxInputBytes)
    return 0;
  static std::unique_ptr<mlir::MLIRContext> context = vram::makeFuzzContext();
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  vram::torch_export::ExportImportOptions options;
  options.batch = 2;
  options.seq = 8;
  vram::torch_export::Importer importer(context.get(), "fuzz.pt2", options);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      bytes.starts_with("PK")
          ? importer.run(bytes)
          : importer.runProgram("fuzz/models/model.json", bytes);
  return 0;
}
