//===- Diagnostics.cpp - how vram-opt prints diagnostics ------------------===//

#include "vram/Pipeline/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace vram;

/// Whether `loc` names a position in a file (the ONNX importer's file
/// locations have line 0: they name the file, not a position).
static bool hasFileLocation(Location loc) {
  bool found = false;
  loc->walk([&](Location inner) {
    auto file = dyn_cast<FileLineColLoc>(inner);
    found |= file && file.getLine() > 0;
    return found ? WalkResult::interrupt() : WalkResult::advance();
  });
  return found;
}

static StringRef severityPrefix(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error: ";
  case DiagnosticSeverity::Warning:
    return "warning: ";
  case DiagnosticSeverity::Note:
    return "note: ";
  case DiagnosticSeverity::Remark:
    return "remark: ";
  }
  llvm_unreachable("unknown severity");
}

NamedLocationDiagnostics::NamedLocationDiagnostics(MLIRContext *context,
                                                   std::string input)
    : handler(context, [input = std::move(input)](Diagnostic &d) {
        if (hasFileLocation(d.getLocation()))
          return failure();
        auto print = [&](Diagnostic &diag) {
          llvm::raw_ostream &os = llvm::errs();
          os << input << ": " << severityPrefix(diag.getSeverity());
          std::string message = diag.str();
          // Name the layer, unless the message already names it quoted
          // (the ONNX importer's "node '...' (Op): ...") or it is the model
          // itself (a zoo model's functions are located at "zoo:NAME"). A
          // bare substring is not enough: layer "fc" is not named by a
          // message about "fc1".
          if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
            if (StringRef layer = name.getName().getValue();
                layer != input &&
                !StringRef(message).contains(("'" + layer + "'").str()))
              os << layer << ": ";
          os << message << "\n";
        };
        print(d);
        for (Diagnostic &note : d.getNotes())
          print(note);
        return success();
      }) {}

ModelDiagnostics::ModelDiagnostics(MLIRContext *context, std::string input)
    : fileHandler(sourceMgr, context), named(context, std::move(input)) {
  context->printOpOnDiagnostic(false);
}
