//===- Diagnostics.cpp - how vram-opt prints diagnostics ------------------===//

#include "vram/Pipeline/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
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

/// Whether `message` names `layer` as a whole name: not inside a longer
/// identifier (a following '.' starts one of its parameters' names).
static bool namesLayer(StringRef message, StringRef layer) {
  auto isNameChar = [](char c) { return llvm::isAlnum(c) || c == '_'; };
  for (size_t at = message.find(layer); at != StringRef::npos;
       at = message.find(layer, at + 1)) {
    size_t end = at + layer.size();
    bool startsName =
        at == 0 || (!isNameChar(message[at - 1]) && message[at - 1] != '.');
    bool endsName = end == message.size() || !isNameChar(message[end]);
    if (startsName && endsName)
      return true;
  }
  return false;
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
          // Name the layer, unless the message already names it (the ONNX
          // importer's "node 'NAME' (Op): ...", a parameter 'NAME.weight')
          // or it is the model itself (a zoo model's functions are located
          // at "zoo:NAME"). Only a whole name counts: layer "output" is
          // not named by 'nn.all_gather_output'.
          if (auto name = dyn_cast<NameLoc>(diag.getLocation()))
            if (StringRef layer = name.getName().getValue();
                layer != input && !namesLayer(message, layer))
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
