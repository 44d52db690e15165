//===- Importer.cpp - ONNX ModelProto -> nn dialect, the core -------------===//
//
// Imports an ONNX graph 1:1 as `func.func @forward` in the nn dialect:
//  - the model is validated (our structural checks, then libonnx's node
//    checker), converted to kTargetOpset by libonnx's version converter when
//    it is older (the original is kept when conversion fails), and libonnx
//    shape inference runs on it with the bound input shapes to cross-check
//    every converted node;
//  - non-initializer graph inputs become function arguments, symbolic dims
//    bound by --dim/--batch/--seq;
//  - initializers become `nn.param` (float, trainable) or `nn.buffer`
//    (BatchNormalization running statistics, integer tensors, names matching
//    --onnx-buffers patterns), created on first use; externally stored
//    initializers only need their dims;
//  - shape computations over constants (Shape, Gather, Concat, ...) are folded
//    at import time, so Reshape/Expand/Slice get static shapes;
//  - each node goes to the converter ConverterTable registers for its op type
//    and opset, which builds the nn ops of that node alone.
// Exporter decompositions (GELU, SiLU, LayerNorm, Linear, ...) are raised back
// to layers afterwards by the vram-onnx-raise pass (RaiseDecompositions.cpp);
// importOnnxModel runs the whole ONNX import pipeline (Pipeline.cpp).
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

#include "vram/Support/CheckedMath.h"

#include "ConverterTable.h"
#include "OnnxLibrary.h"

#include "vram/Dialect/NN/NNDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/STLExtras.h"

#include <climits>
#include <cmath>

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;
using llvm::StringRef;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

bool vram::onnx_import::isFloatTensor(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && isa<FloatType>(t.getElementType());
}

int64_t vram::onnx_import::mulSat(int64_t a, int64_t b) {
  return vram::saturatingMul(a, b);
}

const onnx::AttributeProto *NodeAttrs::get(StringRef name) const {
  for (const auto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::optional<int64_t> NodeAttrs::getInt(StringRef name) const {
  if (auto *a = get(name))
    if (a->type() == onnx::AttributeProto::INT || a->has_i())
      return a->i();
  return std::nullopt;
}

std::optional<double> NodeAttrs::getFloat(StringRef name) const {
  if (auto *a = get(name))
    if (a->type() == onnx::AttributeProto::FLOAT || a->has_f())
      return roundToFloat(a->f());
  return std::nullopt;
}

std::optional<std::string> NodeAttrs::getString(StringRef name) const {
  if (auto *a = get(name))
    if (a->has_s())
      return a->s();
  return std::nullopt;
}

std::optional<std::vector<int64_t>> NodeAttrs::getInts(StringRef name) const {
  if (auto *a = get(name))
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  return std::nullopt;
}

const onnx::TensorProto *NodeAttrs::getTensor(StringRef name) const {
  if (auto *a = get(name))
    if (a->has_t())
      return &a->t();
  return nullptr;
}

SmallVector<int64_t, 4> Entry::shape() const {
  switch (kind) {
  case Tensor:
    return SmallVector<int64_t, 4>(
        cast<RankedTensorType>(value.getType()).getShape());
  case Const:
    return cst->shape;
  case Init:
    return SmallVector<int64_t, 4>(init->dims().begin(), init->dims().end());
  case TransposedInit: {
    SmallVector<int64_t, 4> dims;
    for (int64_t d : perm)
      dims.push_back(init->dims(d));
    return dims;
  }
  }
  return {};
}

//===----------------------------------------------------------------------===//
// OpBinder
//===----------------------------------------------------------------------===//

FailureOr<Value> OpBinder::tensor(int idx, Type constElemType) {
  if (!hasInput(idx))
    return error() << "input " << idx << " is missing";
  return im.tensorOf(node.input(idx), loc, constElemType);
}

FailureOr<Value> OpBinder::optionalTensor(int idx) {
  if (!hasInput(idx))
    return Value();
  return tensor(idx);
}

FailureOr<std::optional<double>>
OpBinder::scalarInputOrAttr(int idx, StringRef attr,
                            std::optional<double> dflt) {
  if (hasInput(idx)) {
    const ConstTensor *c = constInput(idx);
    // A float scalar initializer (a Clip bound, a Dropout ratio) is read,
    // not made a parameter.
    ConstTensor decoded;
    std::string err;
    Entry *e = inputEntry(idx);
    if (!c && e && e->kind == Entry::Init &&
        decodeTensor(*e->init, decoded, err))
      c = &decoded;
    if (!c || c->numElements() != 1) {
      error() << "input " << idx << " (" << attr
              << ") must be a constant scalar";
      return failure();
    }
    return std::optional<double>(c->getF(0));
  }
  if (auto v = attrs.getFloat(attr))
    return std::optional<double>(*v);
  return dflt;
}

FailureOr<std::optional<std::vector<int64_t>>>
OpBinder::intsInputOrAttr(int idx, StringRef attr) {
  if (hasInput(idx)) {
    const ConstTensor *c = constInput(idx);
    if (!c) {
      error() << attr << " must be constant";
      return failure();
    }
    return std::optional<std::vector<int64_t>>(c->toInts());
  }
  return attrs.getInts(attr);
}

//===----------------------------------------------------------------------===//
// Importer: locations, values
//===----------------------------------------------------------------------===//

Importer::Importer(MLIRContext *ctx, StringRef filename,
                   const OnnxImportOptions &opts)
    : ctx(ctx), b(ctx), filename(filename.str()), opts(opts),
      fileLoc(FileLineColLoc::get(ctx, filename, 0, 0)) {
  foldBudget.total = opts.maxFoldedElements;
}

Location Importer::nameLoc(StringRef name) {
  return NameLoc::get(StringAttr::get(ctx, name), fileLoc);
}

Location Importer::nodeLoc(const onnx::NodeProto &n) {
  std::string name = n.name();
  if (name.empty())
    name = n.op_type() + (n.output_size() ? "(" + n.output(0) + ")" : "");
  return nameLoc(name);
}

InFlightDiagnostic Importer::nodeError(const onnx::NodeProto &n) {
  auto d = emitError(nodeLoc(n));
  d << "node '" << n.name() << "' (" << n.op_type() << "): ";
  return d;
}

void Importer::reportBuildFailure(Location loc, StringRef opName,
                                  const std::string &reason) {
  auto diag = emitError(loc);
  if (auto nl = dyn_cast<NameLoc>(loc))
    diag << "node '" << nl.getName().getValue() << "': ";
  diag << "cannot build " << opName << ": "
       << (reason.empty() ? "its operands are not valid" : reason);
}

FailureOr<Type> Importer::elementType(int32_t dt, Location loc,
                                      StringRef what) {
  switch (dt) {
  case DT_FLOAT:
    return Type(Float32Type::get(ctx));
  case DT_DOUBLE:
    return Type(Float64Type::get(ctx));
  case DT_FLOAT16:
    return Type(Float16Type::get(ctx));
  case DT_BFLOAT16:
    return Type(BFloat16Type::get(ctx));
  case DT_INT64:
  case DT_UINT64:
    return Type(IntegerType::get(ctx, 64));
  case DT_INT32:
  case DT_UINT32:
    return Type(IntegerType::get(ctx, 32));
  case DT_INT16:
  case DT_UINT16:
    return Type(IntegerType::get(ctx, 16));
  case DT_INT8:
  case DT_UINT8:
    return Type(IntegerType::get(ctx, 8));
  case DT_BOOL:
    return Type(IntegerType::get(ctx, 1));
  default:
    emitError(loc) << what << " has unsupported element type " << dtypeName(dt)
                   << " (" << dt << ")";
    return failure();
  }
}

bool Importer::isBufferInit(StringRef name, const onnx::TensorProto &t) {
  if (bnStats.count(name) || !isFloatDType(t.data_type()))
    return true;
  for (const auto &g : bufferGlobs)
    if (g.match(name))
      return true;
  return false;
}

void Importer::setTensor(StringRef name, Value v) {
  Entry e;
  e.kind = Entry::Tensor;
  e.value = v;
  env[name] = e;
}

void Importer::setConst(StringRef name, ConstTensor c) {
  Entry e;
  e.kind = Entry::Const;
  e.cst = std::make_shared<ConstTensor>(std::move(c));
  env[name] = e;
}

void Importer::restoreInitializer(const onnx::TensorProto &t, StringRef name) {
  onnx::TensorProto &copy = restoredInits.emplace_back(t);
  copy.set_name(name.str());
  inits[name] = &copy;
  Entry r;
  r.kind = Entry::Init;
  r.init = &copy;
  env[name] = r;
}

const ConstTensor *Importer::constOf(StringRef name) {
  Entry *e = lookup(name);
  if (e && e->kind == Entry::Const)
    return e->cst.get();
  // Integer initializers with their data in the file fold like constants.
  if (e && e->kind == Entry::Init && isIntegerDType(e->init->data_type())) {
    // Decoded once: callers hold the pointer (Reshape(x, x) asks twice).
    if (e->cst)
      return e->cst.get();
    ConstTensor c;
    std::string err;
    if (decodeTensor(*e->init, c, err)) {
      e->cst = std::make_shared<ConstTensor>(std::move(c));
      return e->cst.get();
    }
  }
  return nullptr;
}

const ConstTensor *Importer::constOrInitializerOf(StringRef name) {
  if (const ConstTensor *c = constOf(name))
    return c;
  Entry *e = lookup(name);
  if (!e || e->kind != Entry::Init)
    return nullptr;
  if (e->cst)
    return e->cst.get();
  ConstTensor c;
  std::string err;
  if (!decodeTensor(*e->init, c, err))
    return nullptr;
  e->cst = std::make_shared<ConstTensor>(std::move(c));
  return e->cst.get();
}

Value Importer::materialize(const ConstTensor &c, Type elemType, Location loc) {
  auto type = RankedTensorType::get(c.shape, elemType);
  int64_t n = c.numElements();
  // One APFloat/APInt per element, or a splat when all are equal.
  auto build = [&](auto get, auto convert) {
    bool splat =
        n > 0 && llvm::all_of(llvm::seq<int64_t>(1, n),
                              [&](int64_t k) { return get(k) == get(0); });
    SmallVector<decltype(convert(get(0)))> vals;
    for (int64_t k = 0, e = splat ? 1 : n; k < e; ++k)
      vals.push_back(convert(get(k)));
    return DenseElementsAttr::get(type, ArrayRef(vals));
  };
  DenseElementsAttr attr;
  if (auto ft = dyn_cast<FloatType>(elemType)) {
    attr = build([&](int64_t k) { return c.getF(k); },
                 [&](double v) {
                   llvm::APFloat f(v);
                   bool lost;
                   f.convert(ft.getFloatSemantics(),
                             llvm::APFloat::rmNearestTiesToEven, &lost);
                   return f;
                 });
  } else {
    unsigned w = elemType.getIntOrFloatBitWidth();
    attr = build([&](int64_t k) { return c.getI(k); },
                 [&](int64_t v) {
                   return w == 1 ? llvm::APInt(1, v != 0)
                                 : llvm::APInt(w, v, /*isSigned=*/true,
                                               /*implicitTrunc=*/true);
                 });
  }
  return nn::ConstantOp::create(b, loc, attr);
}

FailureOr<Value> Importer::initValue(const onnx::TensorProto &t) {
  auto it = initValues.find(t.name());
  if (it != initValues.end())
    return it->second;
  Location loc = nameLoc(t.name());
  auto et = elementType(t.data_type(), loc, "initializer '" + t.name() + "'");
  if (failed(et))
    return failure();
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  auto type = RankedTensorType::get(dims, *et);
  Value v;
  if (isBufferInit(t.name(), t))
    v = nn::BufferOp::create(b, loc, type, t.name());
  else
    v = nn::ParamOp::create(b, loc, type, t.name(), /*trainable=*/true);
  // Params and buffers go to the top of the body, in order of first use.
  Operation *op = v.getDefiningOp();
  if (lastInitOp)
    op->moveAfter(lastInitOp);
  else
    op->moveBefore(&op->getBlock()->front());
  lastInitOp = op;
  initValues[t.name()] = v;
  return v;
}

FailureOr<Value> Importer::tensorOf(StringRef name, Location loc,
                                    Type constElemType) {
  Entry *e = lookup(name);
  if (!e)
    return emitError(loc) << "tensor '" << name << "' is not defined";
  switch (e->kind) {
  case Entry::Tensor:
    return e->value;
  case Entry::Const: {
    Type et = constElemType;
    if (!et) {
      auto r = elementType(e->cst->dtype, loc, "constant '" + name.str() + "'");
      if (failed(r))
        return failure();
      et = *r;
    }
    return materialize(*e->cst, et, loc);
  }
  case Entry::Init:
    return initValue(*e->init);
  case Entry::TransposedInit: {
    auto param = initValue(*e->init);
    if (failed(param))
      return failure();
    auto view = make<nn::PermuteOp>(Location(e->viewLoc), *param,
                                    ArrayRef<int64_t>(e->perm));
    if (failed(view))
      return failure();
    setTensor(name, *view); // built once
    return view;
  }
  }
  return failure();
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

LogicalResult Importer::emitNode(const onnx::NodeProto &n) {
  StringRef op = n.op_type();
  // Constant folding: every input is a constant (Shape only needs shapes and
  // has its own converter).
  if (op != "Shape" && isFoldableOp(op)) {
    SmallVector<const ConstTensor *> ins;
    bool allConst = true;
    for (int k = 0; k < n.input_size(); ++k) {
      if (n.input(k).empty()) {
        ins.push_back(nullptr);
        continue;
      }
      const ConstTensor *c = constOf(n.input(k));
      if (!c) {
        allConst = false;
        break;
      }
      ins.push_back(c);
    }
    if (allConst) {
      std::vector<ConstTensor> outs;
      std::string err;
      NodeAttrs attrs(n);
      if (!foldOp(op, ins, attrs, n.output_size(), outs, err, &foldBudget))
        return nodeError(n) << "cannot fold this constant computation: " << err;
      for (size_t k = 0; k < outs.size() && (int)k < n.output_size(); ++k)
        setConst(n.output(k), std::move(outs[k]));
      return success();
    }
  }
  const ConverterFn *convert = ConverterTable::get().lookup(op, opset);
  if (!convert)
    return nodeError(n) << "unsupported op '" << op
                        << "' on non-constant tensors (it is only folded "
                           "when all its inputs are constants)";
  OpBinder binder(*this, n);
  return (*convert)(binder);
}

/// The converters build each node's outputs 1:1, so libonnx's inferred
/// static shape of an output must be the shape of its value: a mismatch is
/// a converter bug (or a model libonnx reads differently), reported at the
/// node rather than as wrong numbers later.
LogicalResult Importer::checkInferredShapes(const onnx::NodeProto &n) {
  for (const std::string &out : n.output()) {
    auto inferred = inferredShapes.find(out);
    Entry *e = out.empty() ? nullptr : lookup(out);
    if (inferred == inferredShapes.end() || !e)
      continue;
    SmallVector<int64_t, 4> ours = e->shape();
    if (ArrayRef<int64_t>(ours) == ArrayRef<int64_t>(inferred->second))
      continue;
    auto diag = nodeError(n) << "output '" << out << "' has shape [";
    llvm::interleaveComma(ours, diag);
    diag << "] but ONNX shape inference gives [";
    llvm::interleaveComma(inferred->second, diag);
    diag << "]";
    return failure();
  }
  return success();
}

FailureOr<Value> Importer::reshapeTo(Value v, ArrayRef<int64_t> shape,
                                     Location loc) {
  auto in = cast<RankedTensorType>(v.getType());
  if (in.getShape() == shape)
    return v;
  auto out = RankedTensorType::get(shape, in.getElementType());
  if (in.getNumElements() != out.getNumElements())
    return emitError(loc) << "cannot reshape " << in << " to " << out;
  return nn::ReshapeOp::create(b, loc, out, v).getResult();
}
