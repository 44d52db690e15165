//===- OnnxLibrary.cpp - what the importer uses from libonnx --------------===//
//
// Compiled with -fexceptions (lib/Import/ONNX/CMakeLists.txt): libonnx
// throws (ValidationError, InferenceError, assert_error, std::exception), and
// nothing may escape into the rest of the importer, which is built without
// exceptions like LLVM.
//
//===----------------------------------------------------------------------===//

#include "OnnxLibrary.h"

#include "onnx/checker.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/tensor_proto_util.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"

#include <exception>
#include <unordered_map>
#include <unordered_set>

using namespace vram::onnx_import;

namespace {
/// The first paragraph of a libonnx message (they append "==> Context:"
/// with the whole node).
std::string firstParagraph(const char *what) {
  std::string msg(what ? what : "unknown error");
  size_t cut = msg.find("\n\n");
  if (cut != std::string::npos)
    msg.resize(cut);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
    msg.pop_back();
  return msg;
}
} // namespace

int64_t libonnx::maxKnownOpset() {
  const auto &map =
      onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  auto it = map.find(onnx::ONNX_DOMAIN);
  return it == map.end() ? 0 : it->second.second;
}

std::optional<std::string>
libonnx::checkNode(const onnx::NodeProto &node, int64_t irVersion,
                   const std::map<std::string, int64_t> &opsets) {
  try {
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version((int)irVersion);
    std::unordered_map<std::string, int> imports;
    for (const auto &[domain, version] : opsets)
      imports[domain] = (int)version;
    ctx.set_opset_imports(std::move(imports));
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_node(node, ctx, lex);
    return std::nullopt;
  } catch (const std::exception &e) {
    return firstParagraph(e.what());
  } catch (...) {
    return std::string("the ONNX checker failed");
  }
}

/// The first name the top-level graph uses (a node input or a graph output)
/// that libonnx's IR import (graphProtoToGraph, which the version converter
/// runs first) would leave undefined, or null. It looks names up among the
/// graph inputs, node outputs and, from IR version 4 (as an `int`, the way
/// libonnx reads it), the initializers; an undefined name becomes a null
/// Value that it dereferences (SIGSEGV, found by vram-onnx-fuzz: an IR 3
/// model whose output is an initializer not listed as an input).
static const std::string *findUndefinedForIrImport(const onnx::GraphProto &g,
                                                   int irVersion) {
  std::unordered_set<std::string> defined;
  for (const auto &vi : g.input())
    defined.insert(vi.name());
  if (irVersion >= 4)
    for (const auto &t : g.initializer())
      defined.insert(t.name());
  for (const auto &n : g.node())
    for (const std::string &out : n.output())
      defined.insert(out);
  for (const auto &n : g.node())
    for (const std::string &in : n.input())
      if (!in.empty() && !defined.count(in))
        return &in;
  for (const auto &vi : g.output())
    if (!defined.count(vi.name()))
      return &vi.name();
  return nullptr;
}

std::optional<std::string>
libonnx::convertVersion(const onnx::ModelProto &model, int64_t targetOpset,
                        onnx::ModelProto &converted) {
  if (const std::string *name = findUndefinedForIrImport(
          model.graph(), static_cast<int>(model.ir_version())))
    return "'" + *name + "' is not defined for the version converter";
  try {
    // onnx::version_conversion::ConvertVersion, with the converter built
    // once: its constructor copies every operator schema of every version
    // and registers the adapters, most of the time of a small model's import
    // (and of vram-onnx-fuzz's runs).
    static const onnx::version_conversion::DefaultVersionConverter converter;
    int64_t initial = 0;
    for (const auto &opset : model.opset_import())
      if (opset.domain().empty() || opset.domain() == "ai.onnx") {
        initial = opset.version();
        break;
      }
    converted = converter.convert_version(model, onnx::OpSetID(initial),
                                          onnx::OpSetID(targetOpset));
    return std::nullopt;
  } catch (const std::exception &e) {
    return firstParagraph(e.what());
  } catch (...) {
    return std::string("the ONNX version converter failed");
  }
}

std::optional<std::string> libonnx::inferShapes(const onnx::ModelProto &model,
                                                InferredShapes &result) {
  try {
    // Strict mode: the first node whose shape cannot be inferred throws
    // rather than leaving its outputs untyped. Without data propagation:
    // libonnx 1.12's data propagators crash (a null dereference in
    // ShapeInferenceImplBase::process, found by vram-onnx-fuzz;
    // test/Import/ONNX/Inputs/dataprop-crash.onnx) on graphs that type
    // inference accepts, and nothing can catch a segfault.
    onnx::ModelProto copy = model;
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/1,
                                        /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                       options);
    auto staticDims = [](const onnx::TensorShapeProto &shape,
                         std::vector<int64_t> &dims) {
      dims.clear();
      for (const auto &d : shape.dim()) {
        if (!d.has_dim_value() || d.dim_value() < 0)
          return false;
        dims.push_back(d.dim_value());
      }
      return true;
    };
    for (const auto &vi : copy.graph().value_info()) {
      if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
        continue;
      std::vector<int64_t> dims;
      if (staticDims(vi.type().tensor_type().shape(), dims))
        result.shapes[vi.name()] = std::move(dims);
    }
    return std::nullopt;
  } catch (const std::exception &e) {
    return firstParagraph(e.what());
  } catch (...) {
    return std::string("ONNX shape inference failed");
  }
}

bool libonnx::parseFloatData(const onnx::TensorProto &t,
                             std::vector<double> &out, std::string &err) {
  try {
    if (t.data_type() == onnx::TensorProto::FLOAT) {
      std::vector<float> v = onnx::ParseData<float>(&t);
      out.assign(v.begin(), v.end());
      return true;
    }
    if (t.data_type() == onnx::TensorProto::DOUBLE) {
      out = onnx::ParseData<double>(&t);
      return true;
    }
    return false;
  } catch (const std::exception &e) {
    err = firstParagraph(e.what());
    return true;
  }
}

bool libonnx::parseIntData(const onnx::TensorProto &t,
                           std::vector<int64_t> &out, std::string &err) {
  try {
    if (t.data_type() == onnx::TensorProto::INT64) {
      out = onnx::ParseData<int64_t>(&t);
      return true;
    }
    if (t.data_type() == onnx::TensorProto::INT32) {
      std::vector<int32_t> v = onnx::ParseData<int32_t>(&t);
      out.assign(v.begin(), v.end());
      return true;
    }
    return false;
  } catch (const std::exception &e) {
    err = firstParagraph(e.what());
    return true;
  }
}
