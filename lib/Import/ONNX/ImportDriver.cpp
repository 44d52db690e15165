//===- ImportDriver.cpp - graph setup and the import driver ---------------===//
//
// From bytes to a verified module: parse, validate (our structural checks,
// then libonnx's node checker), convert to kTargetOpset, bind the input
// shapes, convert the nodes in topological order, cross-check their shapes
// with libonnx shape inference, then run the ONNX import pipeline (in-place
// inference, raising of exporter decompositions).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "ConverterTable.h"
#include "OnnxLibrary.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Support/Findings.h"
#include "vram/Import/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;
using llvm::StringRef;

static std::string supportedOpsList() {
  std::string s;
  for (StringRef op : supportedOps()) {
    if (!s.empty())
      s += ", ";
    s += op.str();
  }
  return s;
}

/// "[2, 3, 4]".
static std::string shapeString(ArrayRef<int64_t> dims) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleaveComma(dims, os);
  os << "]";
  return s;
}

static int64_t defaultDomainOpset(const onnx::ModelProto &model) {
  int64_t opset = kTargetOpset;
  for (const auto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  return opset;
}

void Importer::resetGraphState() {
  env.clear();
  inits.clear();
  producer.clear();
  consumers.clear();
  order.clear();
  graphOutputs.clear();
  bnStats.clear();
  graph = nullptr;
}

LogicalResult Importer::collectInitializers() {
  for (const auto &t : graph->initializer()) {
    Location loc = nameLoc(t.name());
    if (t.name().empty())
      return emitError(loc) << "an initializer has no name";
    bool external = t.data_location() == onnx::TensorProto::EXTERNAL ||
                    t.external_data_size() > 0;
    if (external && t.dims_size() == 0)
      return emitError(loc) << "initializer '" << t.name()
                            << "' is stored as external data but has no dims";
    SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
    if (!checkedNumElements(dims))
      return emitError(loc) << "initializer '" << t.name()
                            << "' has negative dims or dims whose product "
                               "overflows int64";
    if (failed(
            elementType(t.data_type(), loc, "initializer '" + t.name() + "'")))
      return failure();
    if (std::optional<std::string> mismatch = describeStoredSizeMismatch(t))
      return emitError(loc) << "initializer '" << t.name() << "' "
                            << shapeString(dims) << ": " << *mismatch;
    if (inits.count(t.name()))
      return emitError(loc)
             << "initializer '" << t.name() << "' is defined twice";
    inits[t.name()] = &t;
    Entry e;
    e.kind = Entry::Init;
    e.init = &t;
    env[t.name()] = e;
  }
  return success();
}

/// Graph inputs have names of their own, and an input that an initializer
/// of the same name provides (the IR < 4 convention, or an overridable
/// default) must describe that initializer: its element type and its dims,
/// where it states them. Otherwise the graph means two different things.
LogicalResult Importer::checkGraphInputs() {
  llvm::StringSet<> names;
  for (const auto &vi : graph->input()) {
    Location loc = nameLoc(vi.name());
    if (!names.insert(vi.name()).second)
      return emitError(loc)
             << "graph input '" << vi.name() << "' is declared twice";
    auto init = inits.find(vi.name());
    if (init == inits.end() || !vi.has_type() || !vi.type().has_tensor_type())
      continue;
    const onnx::TensorProto &t = *init->second;
    const auto &tt = vi.type().tensor_type();
    SmallVector<int64_t> initDims(t.dims().begin(), t.dims().end());
    bool agrees = !tt.has_elem_type() || tt.elem_type() == 0 ||
                  tt.elem_type() == t.data_type();
    if (agrees && tt.has_shape()) {
      agrees = tt.shape().dim_size() == (int)initDims.size();
      for (int k = 0; agrees && k < tt.shape().dim_size(); ++k)
        agrees = !tt.shape().dim(k).has_dim_value() ||
                 tt.shape().dim(k).dim_value() == initDims[k];
    }
    if (!agrees) {
      std::string declared;
      llvm::raw_string_ostream os(declared);
      os << dtypeName(tt.elem_type()) << " [";
      if (tt.has_shape())
        for (int k = 0; k < tt.shape().dim_size(); ++k) {
          const auto &d = tt.shape().dim(k);
          os << (k ? ", " : "");
          if (d.has_dim_value())
            os << d.dim_value();
          else
            os << (d.dim_param().empty() ? "?" : d.dim_param());
        }
      os << "]";
      return emitError(loc)
             << "graph input '" << vi.name() << "' is declared as " << declared
             << " but the initializer of the same name is "
             << dtypeName(t.data_type()) << " " << shapeString(initDims);
    }
  }
  return success();
}

FailureOr<RankedTensorType>
Importer::inputType(const onnx::ValueInfoProto &vi) {
  Location loc = nameLoc(vi.name());
  if (!vi.has_type() || !vi.type().has_tensor_type())
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has no tensor type";
  const auto &tt = vi.type().tensor_type();
  if (!tt.has_shape())
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has no shape; the importer needs ranked inputs";
  auto et = elementType(tt.elem_type(), loc, "graph input '" + vi.name() + "'");
  if (failed(et))
    return failure();
  SmallVector<int64_t> shape;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto &d = tt.shape().dim(k);
    if (d.has_dim_value()) {
      if (d.dim_value() < 0)
        return emitError(loc) << "graph input '" << vi.name() << "' dimension "
                              << k << " is negative (" << d.dim_value() << ")";
      shape.push_back(d.dim_value());
      continue;
    }
    std::string param = d.has_dim_param() ? d.dim_param() : "";
    if (!param.empty() && opts.symbolicDims)
      opts.symbolicDims->insert(param);
    if (!param.empty()) {
      auto it = opts.dims.find(param);
      if (it != opts.dims.end()) {
        shape.push_back(it->second);
        continue;
      }
      std::string lower = StringRef(param).lower();
      StringRef l(lower);
      // torch.onnx names an unnamed dynamic axis `<input>_dynamic_axes_<k>`:
      // on dimension 0 it is the batch.
      bool batchLike = l == "n" || l == "b" || l == "bs" ||
                       l.contains("batch") ||
                       (k == 0 && l.contains("dynamic_axes"));
      bool seqLike = l == "t" || l == "s" || l == "l" || l.contains("seq") ||
                     l == "len" || l == "length" || l == "tokens" ||
                     l == "num_tokens" || l == "time" || l == "sequence";
      if (batchLike) {
        // An unbound batch is bound to 1, as a lint finding: the memory of
        // one sample is what a user asking about the file most likely
        // wants, and --batch or --fit-batch say otherwise.
        if (!opts.batch && defaultBoundDims.insert(param).second)
          emitFinding(loc, rules::kDefaultBoundDimension)
              << "graph input '" << vi.name() << "' dimension " << k
              << " is symbolic ('" << param
              << "'), taken as the batch and bound to 1 by default; set it "
                 "with --batch=N";
        boundBatch = opts.batch.value_or(1);
        shape.push_back(*boundBatch);
        continue;
      }
      if (seqLike && opts.seq) {
        shape.push_back(*opts.seq);
        continue;
      }
    }
    auto diag = emitError(loc) << "graph input '" << vi.name() << "' dimension "
                               << k << " is ";
    if (param.empty())
      diag << "unknown; it cannot be bound";
    else
      diag << "symbolic ('" << param << "') and unbound; bind it with --dim "
           << param << "=VALUE (or --batch/--seq for batch and sequence dims)";
    return failure();
  }
  if (!checkedNumElements(shape))
    return emitError(loc) << "graph input '" << vi.name()
                          << "' has dims whose product overflows int64";
  return RankedTensorType::get(shape, *et);
}

LogicalResult Importer::sortNodes() {
  llvm::StringSet<> defined;
  for (const auto &t : graph->initializer())
    defined.insert(t.name());
  for (const auto &vi : graph->input())
    defined.insert(vi.name());
  // Producers. Every ONNX op has an output; the converters rely on output(0).
  for (const auto &n : graph->node()) {
    if (n.output_size() == 0)
      return nodeError(n) << "the node has no outputs";
    for (const auto &o : n.output()) {
      if (o.empty())
        continue;
      if (producer.count(o) || defined.count(o))
        return nodeError(n) << "output '" << o
                            << "' is already defined elsewhere in the graph";
      producer[o] = &n;
    }
  }
  // Kahn's algorithm over node-to-node edges.
  llvm::DenseMap<const onnx::NodeProto *, unsigned> pending;
  llvm::DenseMap<const onnx::NodeProto *,
                 SmallVector<const onnx::NodeProto *, 2>>
      succ;
  for (const auto &n : graph->node()) {
    unsigned deps = 0;
    for (const auto &i : n.input()) {
      if (i.empty())
        continue;
      consumers[i].push_back(&n);
      auto it = producer.find(i);
      if (it != producer.end()) {
        ++deps;
        succ[it->second].push_back(&n);
      } else if (!defined.count(i)) {
        return nodeError(n) << "input '" << i
                            << "' is not produced by any node, graph input or "
                               "initializer";
      }
    }
    pending[&n] = deps;
  }
  std::deque<const onnx::NodeProto *> ready;
  for (const auto &n : graph->node())
    if (pending[&n] == 0)
      ready.push_back(&n);
  while (!ready.empty()) {
    const onnx::NodeProto *n = ready.front();
    ready.pop_front();
    order.push_back(n);
    for (const onnx::NodeProto *s : succ[n])
      if (--pending[s] == 0)
        ready.push_back(s);
  }
  for (const auto &o : graph->output())
    if (!producer.count(o.name()) && !defined.count(o.name()))
      return emitError(nameLoc(o.name()))
             << "graph output '" << o.name()
             << "' is not produced by any node, graph input or initializer";
  if ((int)order.size() != graph->node_size()) {
    for (const auto &n : graph->node())
      if (pending[&n] != 0)
        return nodeError(n) << "the graph has a cycle through this node ("
                            << (graph->node_size() - order.size())
                            << " nodes are on or after a cycle)";
  }
  return success();
}

/// Every node needs a converter (or folds on constants), then must pass
/// libonnx's checker for its schema. The checker only knows the opsets of
/// the libonnx it comes with; newer models skip it.
LogicalResult Importer::validateNodes(const onnx::ModelProto &model) {
  const ConverterTable &table = ConverterTable::get();
  std::map<std::string, int64_t> opsets;
  for (const auto &o : model.opset_import())
    opsets[o.domain() == "ai.onnx" ? "" : o.domain()] = o.version();
  bool checkable = opset <= libonnx::maxKnownOpset();
  for (const onnx::NodeProto *n : order) {
    StringRef op = n->op_type();
    if (!n->domain().empty() && n->domain() != "ai.onnx")
      return nodeError(*n) << "unsupported op '" << n->domain() << "::" << op
                           << "'; supported ops (default domain): "
                           << supportedOpsList();
    if (!table.lookup(op, opset) && !isFoldableOp(op)) {
      if (int64_t first = table.firstVersion(op))
        return nodeError(*n) << "op '" << op << "' needs opset " << first
                             << " or later; this model has opset " << opset;
      return nodeError(*n) << "unsupported op '" << op
                           << "'; supported ops: " << supportedOpsList();
    }
    if (!checkable)
      continue;
    if (auto msg = libonnx::checkNode(*n, model.ir_version(), opsets))
      return nodeError(*n) << "invalid node (ONNX checker): " << *msg;
  }
  return success();
}

LogicalResult Importer::prepareGraph(const onnx::ModelProto &model) {
  graph = &model.graph();
  for (const auto &n : graph->node())
    if (n.op_type() == "BatchNormalization")
      for (int k = 3; k < 5 && k < n.input_size(); ++k)
        bnStats.insert(n.input(k));
  for (const auto &o : graph->output())
    graphOutputs.insert(o.name());
  if (failed(collectInitializers()) || failed(checkGraphInputs()) ||
      failed(sortNodes()))
    return failure();
  return validateNodes(model);
}

/// Whether libonnx's version converter can convert `model` without the
/// shapes of its tensors (which exported models need not record): the
/// adapters from opset 6 (broadcasting) and the Softmax family's 12 -> 13
/// adapters read input shapes, and crash or misconvert without them. Such
/// models keep their opset; the converters registered for it handle them.
static bool needsNoShapes(const onnx::ModelProto &model, int64_t opset) {
  if (opset < 7)
    return false;
  if (opset < 13)
    for (const auto &n : model.graph().node())
      if (n.op_type() == "Softmax" || n.op_type() == "LogSoftmax" ||
          n.op_type() == "Hardmax")
        return false;
  return true;
}

/// Converts `model` in place to kTargetOpset with libonnx's version
/// converter. The converter rebuilds initializers and the types of graph
/// inputs, outputs and value_info from its IR, which drops external-data
/// references and truncates dims to 32 bits (a batch of 2^32 + 2 would come
/// back as 2): the originals are put back by name.
/// When the converter cannot convert the model (e.g. BatchNormalization with
/// the five outputs of opset < 14), the model keeps its opset and the
/// converters registered for it.
void Importer::convertToTargetOpset(onnx::ModelProto &model,
                                    int64_t modelOpset) {
  opset = modelOpset;
  if (modelOpset >= kTargetOpset || !needsNoShapes(model, modelOpset))
    return;
  onnx::ModelProto converted;
  if (libonnx::convertVersion(model, kTargetOpset, converted))
    return;
  llvm::StringMap<const onnx::TensorProto *> original;
  for (const auto &t : model.graph().initializer())
    original[t.name()] = &t;
  for (auto &t : *converted.mutable_graph()->mutable_initializer()) {
    auto it = original.find(t.name());
    if (it != original.end())
      t = *it->second;
  }
  llvm::StringMap<const onnx::TypeProto *> declared;
  const onnx::GraphProto &g = model.graph();
  for (const auto *infos : {&g.input(), &g.output(), &g.value_info()})
    for (const onnx::ValueInfoProto &vi : *infos)
      if (vi.has_type())
        declared.try_emplace(vi.name(), &vi.type());
  onnx::GraphProto &c = *converted.mutable_graph();
  for (auto *infos :
       {c.mutable_input(), c.mutable_output(), c.mutable_value_info()})
    for (onnx::ValueInfoProto &vi : *infos) {
      auto it = declared.find(vi.name());
      if (it != declared.end())
        *vi.mutable_type() = *it->second;
    }
  // Our own checks on the converted graph; should they fail, keep the
  // original (already checked) model.
  resetGraphState();
  opset = kTargetOpset;
  LogicalResult prepared = failure();
  {
    ScopedDiagnosticHandler silence(ctx,
                                    [](Diagnostic &) { return success(); });
    prepared = prepareGraph(converted);
  }
  resetGraphState();
  if (succeeded(prepared)) {
    model = std::move(converted);
  } else {
    opset = modelOpset;
  }
}

void Importer::inferShapes(const onnx::ModelProto &model,
                           ArrayRef<RankedTensorType> argTypes) {
  if (opset > libonnx::maxKnownOpset())
    return;
  // Inference runs with the input shapes the importer bound.
  onnx::ModelProto bound = model;
  unsigned arg = 0;
  for (auto &vi : *bound.mutable_graph()->mutable_input()) {
    if (inits.count(vi.name()) || arg >= argTypes.size())
      continue;
    auto *shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : argTypes[arg].getShape())
      shape->add_dim()->set_dim_value(d);
    ++arg;
  }
  libonnx::InferredShapes result;
  if (libonnx::inferShapes(bound, result))
    return; // inference is a cross-check, not a requirement
  for (auto &[name, dims] : result.shapes)
    inferredShapes[name].assign(dims.begin(), dims.end());
}

/// torch.onnx's inference-mode export (the default, model.eval()) drops
/// dropout and, with constant folding, folds BatchNorm into the
/// convolutions: training numbers from it are 15-50% low. A PyTorch graph
/// with convolutions or matmuls but neither BatchNormalization nor Dropout
/// is no evidence alone (a LLaMA-style block has neither when exported for
/// training); the warning also needs a trace the eval-mode exporter leaves:
///  - a convolution whose weight or bias is an initializer named by
///    torch.onnx (`onnx::Conv_497`): BatchNorm folded into it, where a
///    training export keeps the module's parameter (`layer1.0.conv1.weight`).
///    A matmul's `onnx::MatMul_N` is no sign: a Linear's weight transposed
///    by constant folding, in training exports too;
///  - an Identity node reading an initializer: torch.onnx merges parameters
///    of equal value that way only when not training (training merges only
///    tensors sharing storage, which tracing has already merged). Every
///    eval-mode torchvision fixture has them (vgg11, squeezenet1_0,
///    convnext_tiny, swin_t, efficientnet_b0), no training-mode one does.
void Importer::warnIfInferenceExport(const onnx::ModelProto &model) {
  if (StringRef(model.producer_name()).lower() != "pytorch")
    return;
  const onnx::GraphProto &g = model.graph();
  bool compute = false, trainingOnly = false;
  for (const auto &n : g.node()) {
    StringRef type = n.op_type();
    compute |= type == "Conv" || type == "MatMul" || type == "Gemm";
    trainingOnly |= type == "BatchNormalization" || type == "Dropout";
  }
  if (!compute || trainingOnly)
    return;
  llvm::StringSet<> initializers;
  for (const auto &t : g.initializer())
    initializers.insert(t.name());
  std::string evidence;
  for (const auto &n : g.node()) {
    if (n.op_type() == "Conv") {
      for (int i = 1; i < std::min(n.input_size(), 3); ++i)
        if (StringRef(n.input(i)).starts_with("onnx::") &&
            initializers.contains(n.input(i))) {
          evidence = "convolution " + std::string(i == 1 ? "weight" : "bias") +
                     " '" + n.input(i) +
                     "' is named by torch.onnx: BatchNorm folded into it";
          break;
        }
    } else if (n.op_type() == "Identity" && n.input_size() == 1 &&
               n.output_size() == 1 && initializers.contains(n.input(0))) {
      evidence = "'" + n.output(0) + "' is an Identity of '" + n.input(0) +
                 "': parameters of equal value merged, as torch.onnx does "
                 "only in eval mode";
    }
    if (!evidence.empty())
      break;
  }
  if (evidence.empty())
    return;
  emitFinding(fileLoc, rules::kInferenceExport)
      << "'" << filename
      << "' looks like an inference-mode export (no BatchNormalization or "
         "Dropout, and "
      << evidence
      << "); training numbers from it are low. Export the training graph "
         "with torch.onnx.export(model.train(), args, path, "
         "training=torch.onnx.TrainingMode.TRAINING, "
         "do_constant_folding=False)";
}

OwningOpRef<ModuleOp> Importer::run(StringRef bytes) {
  ctx->getOrLoadDialect<nn::NNDialect>();
  ctx->getOrLoadDialect<func::FuncDialect>();

  onnx::ModelProto model;
  if (bytes.size() > (size_t)INT_MAX ||
      !model.ParseFromArray(bytes.data(), (int)bytes.size())) {
    emitError(fileLoc) << "cannot parse '" << filename
                       << "' as an ONNX model (truncated or corrupt protobuf)";
    return nullptr;
  }
  if (!model.has_graph()) {
    emitError(fileLoc) << "'" << filename
                       << "' has no graph (not an ONNX model?)";
    return nullptr;
  }
  for (const auto &p : opts.bufferPatterns) {
    auto g = llvm::GlobPattern::create(p);
    if (!g) {
      llvm::consumeError(g.takeError());
      emitError(fileLoc) << "invalid buffer name pattern '" << p << "'";
      return nullptr;
    }
    bufferGlobs.push_back(std::move(*g));
  }

  warnIfInferenceExport(model);
  int64_t modelOpset = defaultDomainOpset(model);
  opset = modelOpset;
  if (failed(prepareGraph(model)))
    return nullptr;
  resetGraphState();
  convertToTargetOpset(model, modelOpset);
  if (failed(prepareGraph(model)))
    return nullptr;

  // Function arguments.
  SmallVector<RankedTensorType> argTypes;
  SmallVector<Location> argLocs;
  SmallVector<std::string> argNames;
  for (const auto &vi : graph->input()) {
    if (inits.count(vi.name()))
      continue;
    auto t = inputType(vi);
    if (failed(t))
      return nullptr;
    argTypes.push_back(*t);
    argLocs.push_back(nameLoc(vi.name()));
    argNames.push_back(vi.name());
  }
  if (graph->output_size() == 0) {
    emitError(fileLoc) << "the graph has no outputs";
    return nullptr;
  }

  SmallVector<Type> argTys(argTypes.begin(), argTypes.end());
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, fileLoc, "forward",
                                   FunctionType::get(ctx, argTys, {}));
  // The batch the front end bound, for the report and --batch checks.
  if (boundBatch)
    func->setAttr(nn::NNDialect::kBatchAttrName,
                  b.getI64IntegerAttr(*boundBatch));
  Block *body = func.addEntryBlock();
  for (unsigned k = 0; k < argTys.size(); ++k) {
    body->getArgument(k).setLoc(argLocs[k]);
    setTensor(argNames[k], body->getArgument(k));
  }
  b.setInsertionPointToEnd(body);

  for (const onnx::NodeProto *n : order)
    if (failed(emitNode(*n)))
      return nullptr;
  // libonnx shape inference runs only on a graph the converters accepted:
  // it parses initializers unchecked (onnx::ParseData on a malformed one
  // reads through a null pointer), and ours were all validated by now.
  inferShapes(model, argTypes);
  for (const onnx::NodeProto *n : order)
    if (failed(checkInferredShapes(*n)))
      return nullptr;

  SmallVector<Value> results;
  for (const auto &o : graph->output()) {
    auto v = tensorOf(o.name(), nameLoc(o.name()));
    if (failed(v))
      return nullptr;
    results.push_back(*v);
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(
      FunctionType::get(ctx, argTys, TypeRange(ValueRange(results))));
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

OwningOpRef<ModuleOp>
vram::onnx_import::importOnnxModel(MLIRContext *context, StringRef bytes,
                                   StringRef filename,
                                   const OnnxImportOptions &options) {
  OwningOpRef<ModuleOp> module;
  {
    Importer importer(context, filename, options);
    module = importer.run(bytes);
  }
  if (!module || !options.runImportPipeline)
    return module;
  PassManager pm(context, ModuleOp::getOperationName());
  buildOnnxImportPipeline(pm);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

bool vram::onnx_import::readInitializers(
    StringRef bytes, llvm::StringMap<InitializerData> &initializers,
    std::string &error) {
  onnx::ModelProto model;
  if (bytes.size() > (size_t)INT_MAX ||
      !model.ParseFromArray(bytes.data(), (int)bytes.size()) ||
      !model.has_graph()) {
    error = "not a parseable ONNX model";
    return false;
  }
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    int32_t dt = t.data_type();
    const char *descr = dt == DT_FLOAT    ? "<f4"
                        : dt == DT_DOUBLE ? "<f8"
                        : dt == DT_INT64  ? "<i8"
                        : dt == DT_INT32  ? "<i4"
                                          : nullptr;
    ConstTensor value;
    std::string err;
    if (!descr || !decodeTensor(t, value, err))
      continue;
    InitializerData data;
    data.descr = descr;
    data.shape.assign(t.dims().begin(), t.dims().end());
    int64_t n = value.numElements();
    auto append = [&](auto v) {
      const char *p = reinterpret_cast<const char *>(&v);
      data.bytes.insert(data.bytes.end(), p, p + sizeof(v));
    };
    for (int64_t k = 0; k < n; ++k) {
      if (dt == DT_FLOAT)
        append(static_cast<float>(value.getF(k)));
      else if (dt == DT_DOUBLE)
        append(value.getF(k));
      else if (dt == DT_INT64)
        append(value.getI(k));
      else
        append(static_cast<int32_t>(value.getI(k)));
    }
    initializers[t.name()] = std::move(data);
  }
  return true;
}
