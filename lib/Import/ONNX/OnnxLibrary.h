//===- OnnxLibrary.h - what the importer uses from libonnx ------*- C++ -*-===//
//
// Exception-free wrappers around libonnx (Debian's libonnx 1.12): the node
// checker, the version converter, shape inference and tensor parsing. libonnx
// reports errors by throwing; OnnxLibrary.cpp is the one file of the importer
// compiled with -fexceptions, and turns every exception into a message.
//
//===----------------------------------------------------------------------===//

#ifndef VRAM_LIB_IMPORT_ONNX_ONNXLIBRARY_H
#define VRAM_LIB_IMPORT_ONNX_ONNXLIBRARY_H

#include "onnx/onnx_pb.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace vram::onnx_import::libonnx {

/// The newest default-domain opset libonnx has schemas for.
int64_t maxKnownOpset();

/// Runs onnx::checker::check_node (schema: input/output counts, attribute
/// names and types, tensor attributes) on `node` of a model with
/// `irVersion` and `opsets` (domain -> version). Returns the checker's
/// message when the node is invalid.
std::optional<std::string>
checkNode(const onnx::NodeProto &node, int64_t irVersion,
          const std::map<std::string, int64_t> &opsets);

/// onnx::version_conversion::ConvertVersion of `model` to `targetOpset`;
/// returns the converter's message when it cannot convert the model.
std::optional<std::string> convertVersion(const onnx::ModelProto &model,
                                          int64_t targetOpset,
                                          onnx::ModelProto &converted);

/// The static shapes libonnx infers for node outputs, by tensor name.
struct InferredShapes {
  std::map<std::string, std::vector<int64_t>> shapes;
};

/// onnx::shape_inference::InferShapes (strict, without data propagation,
/// which crashes in libonnx 1.12) on a copy of `model`; returns the message
/// when inference fails.
std::optional<std::string> inferShapes(const onnx::ModelProto &model,
                                       InferredShapes &result);

/// onnx::ParseData for the element types it supports (float, double, int32,
/// int64: raw_data or the typed field). Returns false when `t` has another
/// element type; `err` is set when parsing failed.
bool parseFloatData(const onnx::TensorProto &t, std::vector<double> &out,
                    std::string &err);
bool parseIntData(const onnx::TensorProto &t, std::vector<int64_t> &out,
                  std::string &err);

} // namespace vram::onnx_import::libonnx

#endif // VRAM_LIB_IMPORT_ONNX_ONNXLIBRARY_H
