//===- Importer.cpp - the core of the torch.export importer ---------------===//

#include "Importer.h"

#include "Archive.h"
#include "ConverterTable.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Support/Findings.h"
#include "vram/Support/Json.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace mlir;
using namespace vram;
using namespace vram::torch_export;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Schema helpers
//===----------------------------------------------------------------------===//

namespace {

/// The single key of a schema union ({"as_int": 3}) and its value.
std::optional<std::pair<llvm::StringRef, const json::Value *>>
unionMember(const json::Value &v) {
  const json::Object *o = v.getAsObject();
  if (!o || o->size() != 1)
    return std::nullopt;
  const auto &kv = *o->begin();
  return std::make_pair(llvm::StringRef(kv.first), &kv.second);
}

/// The name inside {"name": ...}.
std::optional<llvm::StringRef> nameOf(const json::Value *v) {
  if (const json::Object *o = v ? v->getAsObject() : nullptr)
    return o->getString("name");
  return std::nullopt;
}

/// A float as the schema writes it: a number, or "Infinity", "-Infinity",
/// "NaN".
std::optional<double> floatOf(const json::Value &v) {
  if (std::optional<double> d = v.getAsNumber())
    return d;
  if (std::optional<llvm::StringRef> s = v.getAsString()) {
    if (*s == "Infinity")
      return INFINITY;
    if (*s == "-Infinity")
      return -INFINITY;
    if (*s == "NaN")
      return NAN;
  }
  return std::nullopt;
}

/// sympy's srepr of a size ("Symbol('s77', positive=True, integer=True)",
/// "Mul(Integer(2), Symbol('s0'))") or a plain symbol or integer, evaluated
/// under `symbols`: the sums, products and floor divisions torch.export
/// writes for sizes.
class SizeExpression {
public:
  SizeExpression(llvm::StringRef text, const llvm::StringMap<int64_t> &symbols)
      : text(text.trim()), symbols(symbols) {}

  std::optional<int64_t> evaluate() {
    std::optional<int64_t> v = term();
    skipSpace();
    return pos == text.size() ? v : std::nullopt;
  }

  /// The symbol's name when the whole expression is one symbol.
  static std::optional<llvm::StringRef> plainSymbol(llvm::StringRef text) {
    text = text.trim();
    if (text.consume_front("Symbol('")) {
      size_t end = text.find('\'');
      if (end == llvm::StringRef::npos || end == 0 ||
          !text.drop_front(end + 1).trim().ends_with(")"))
        return std::nullopt;
      return text.take_front(end);
    }
    if (!text.empty() &&
        llvm::all_of(text,
                     [](char c) { return llvm::isAlnum(c) || c == '_'; }) &&
        !llvm::isDigit(text.front()))
      return text;
    return std::nullopt;
  }

private:
  void skipSpace() {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  }
  bool eat(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  llvm::StringRef identifier() {
    skipSpace();
    size_t start = pos;
    while (pos < text.size() && (llvm::isAlnum(text[pos]) || text[pos] == '_'))
      ++pos;
    return text.slice(start, pos);
  }
  std::optional<int64_t> integer() {
    skipSpace();
    size_t start = pos;
    if (pos < text.size() && text[pos] == '-')
      ++pos;
    while (pos < text.size() && llvm::isDigit(text[pos]))
      ++pos;
    int64_t v;
    if (text.slice(start, pos).getAsInteger(10, v))
      return std::nullopt;
    return v;
  }
  /// Skips `, key=Value` keyword arguments up to the closing parenthesis.
  bool skipKeywords() {
    while (eat(',')) {
      identifier();
      if (!eat('='))
        return false;
      identifier();
    }
    return eat(')');
  }
  std::optional<int64_t> term() {
    if (++depth > 64)
      return std::nullopt;
    std::optional<int64_t> result = termBody();
    --depth;
    return result;
  }
  std::optional<int64_t> termBody() {
    skipSpace();
    if (pos < text.size() && (llvm::isDigit(text[pos]) || text[pos] == '-'))
      return integer();
    llvm::StringRef head = identifier();
    if (head.empty())
      return std::nullopt;
    if (!eat('(')) {
      auto it = symbols.find(head);
      return it == symbols.end() ? std::nullopt
                                 : std::optional<int64_t>(it->second);
    }
    if (head == "Symbol") {
      if (!eat('\''))
        return std::nullopt;
      size_t end = text.find('\'', pos);
      if (end == llvm::StringRef::npos)
        return std::nullopt;
      llvm::StringRef name = text.slice(pos, end);
      pos = end + 1;
      if (!skipKeywords())
        return std::nullopt;
      auto it = symbols.find(name);
      return it == symbols.end() ? std::nullopt
                                 : std::optional<int64_t>(it->second);
    }
    if (head == "Integer") {
      std::optional<int64_t> v = integer();
      return v && eat(')') ? v : std::nullopt;
    }
    llvm::SmallVector<int64_t, 4> args;
    do {
      std::optional<int64_t> v = term();
      if (!v)
        return std::nullopt;
      args.push_back(*v);
    } while (eat(','));
    if (!eat(')') || args.empty())
      return std::nullopt;
    int64_t r = args[0];
    for (int64_t a : llvm::drop_begin(args)) {
      if (head == "Add") {
        if (llvm::AddOverflow(r, a, r))
          return std::nullopt;
      } else if (head == "Mul") {
        if (llvm::MulOverflow(r, a, r))
          return std::nullopt;
      } else if (head == "FloorDiv" && args.size() == 2 && a > 0) {
        r = r >= 0 ? r / a : -((-r + a - 1) / a);
      } else if (head == "Max" || head == "Min") {
        r = head == "Max" ? std::max(r, a) : std::min(r, a);
      } else {
        return std::nullopt;
      }
    }
    return r;
  }

  llvm::StringRef text;
  const llvm::StringMap<int64_t> &symbols;
  size_t pos = 0;
  int depth = 0;
};

/// The module path of the innermost entry of nn_module_stack
/// ("L__self__,,__main__.Net;L__self___layer1_0,layer1.0,torchvision...").
std::string modulePath(llvm::StringRef stack) {
  if (stack.empty())
    return "";
  llvm::StringRef last =
      stack.rsplit(';').second.empty() ? stack : stack.rsplit(';').second;
  // key,path,type: the key has no comma, the type is the last field.
  llvm::StringRef rest = last.split(',').second;
  return rest.rsplit(',').first.str();
}

/// The innermost frame of a stack trace outside the torch package: the
/// model's own line.
std::optional<std::pair<std::string, unsigned>>
sourceFrame(llvm::StringRef trace) {
  std::optional<std::pair<std::string, unsigned>> found;
  llvm::SmallVector<llvm::StringRef> lines;
  trace.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (!line.consume_front("File \""))
      continue;
    auto [file, rest] = line.split('"');
    if (!rest.consume_front(", line "))
      continue;
    unsigned number;
    if (rest.take_while(llvm::isDigit).getAsInteger(10, number))
      continue;
    if (file.contains("/torch/"))
      continue;
    found = {file.str(), number};
  }
  return found;
}

} // namespace

//===----------------------------------------------------------------------===//
// NodeBinder
//===----------------------------------------------------------------------===//

NodeBinder::NodeBinder(Importer &importer, const json::Object &node,
                       llvm::StringRef nodeName, llvm::StringRef target,
                       Location loc)
    : importer(importer), node(node), nodeName(nodeName), target(target),
      loc(loc) {}

OpBuilder &NodeBinder::getBuilder() { return importer.b; }
MLIRContext *NodeBinder::getContext() { return importer.ctx; }
const nn::TorchTarget &NodeBinder::getTorchTarget() const {
  return importer.opts.target;
}

InFlightDiagnostic NodeBinder::error() {
  return emitError(loc) << "node '" << nodeName << "' (" << target << "): ";
}

const json::Object *NodeBinder::argument(llvm::StringRef name) {
  const json::Array *inputs = node.getArray("inputs");
  if (!inputs)
    return nullptr;
  for (const json::Value &input : *inputs) {
    const json::Object *o = input.getAsObject();
    if (!o || o->getString("name") != name)
      continue;
    consumed.insert(name);
    return o->getObject("arg");
  }
  return nullptr;
}

bool NodeBinder::has(llvm::StringRef name) {
  const json::Object *arg = argument(name);
  return arg && !arg->get("as_none");
}

FailureOr<Value> NodeBinder::tensor(llvm::StringRef name) {
  FailureOr<Value> v = optionalTensor(name);
  if (succeeded(v) && !*v)
    return error() << "argument '" << name << "' must be a tensor";
  return v;
}

FailureOr<Value> NodeBinder::optionalTensor(llvm::StringRef name) {
  const json::Object *arg = argument(name);
  if (!arg || arg->get("as_none"))
    return Value();
  std::optional<llvm::StringRef> tensorName;
  if (const json::Value *t = arg->get("as_tensor"))
    tensorName = nameOf(t);
  else if (const json::Value *t = arg->get("as_optional_tensor"))
    if (const json::Object *o = t->getAsObject()) {
      if (o->get("as_none"))
        return Value();
      tensorName = nameOf(o->get("as_tensor"));
    }
  if (!tensorName)
    return error() << "argument '" << name << "' must be a tensor";
  return importer.valueOf(*tensorName, loc);
}

FailureOr<llvm::SmallVector<Value>> NodeBinder::tensors(llvm::StringRef name) {
  const json::Object *arg = argument(name);
  const json::Array *list = arg ? arg->getArray("as_tensors") : nullptr;
  if (!list)
    return error() << "argument '" << name << "' must be a list of tensors";
  llvm::SmallVector<Value> result;
  for (const json::Value &t : *list) {
    std::optional<llvm::StringRef> tensorName = nameOf(&t);
    if (!tensorName)
      return error() << "argument '" << name << "' must be a list of tensors";
    FailureOr<Value> v = importer.valueOf(*tensorName, loc);
    if (failed(v))
      return failure();
    result.push_back(*v);
  }
  return result;
}

/// An int or symbolic int ({"as_int": 3}, {"as_name": "sym_size_int"}).
static std::optional<int64_t> intOf(const json::Value &v, Importer &importer) {
  if (std::optional<int64_t> i = getJsonInteger(v))
    return i;
  const json::Object *o = v.getAsObject();
  if (!o)
    return std::nullopt;
  if (std::optional<int64_t> i = getJsonInteger(*o, "as_int"))
    return i;
  if (std::optional<llvm::StringRef> name = o->getString("as_name"))
    return importer.symbolicInt(*name);
  return std::nullopt;
}

FailureOr<std::optional<int64_t>>
NodeBinder::optionalInteger(llvm::StringRef name) {
  const json::Object *arg = argument(name);
  if (!arg || arg->get("as_none"))
    return std::optional<int64_t>();
  if (std::optional<int64_t> i = getJsonInteger(*arg, "as_int"))
    return std::optional<int64_t>(i);
  if (const json::Value *s = arg->get("as_sym_int"))
    if (std::optional<int64_t> i = intOf(*s, importer))
      return std::optional<int64_t>(i);
  return error() << "argument '" << name << "' must be an int";
}

FailureOr<int64_t> NodeBinder::integer(llvm::StringRef name,
                                       std::optional<int64_t> fallback) {
  FailureOr<std::optional<int64_t>> v = optionalInteger(name);
  if (failed(v))
    return failure();
  if (*v)
    return **v;
  if (fallback)
    return *fallback;
  return error() << "argument '" << name << "' must be an int";
}

FailureOr<llvm::SmallVector<int64_t>>
NodeBinder::integers(llvm::StringRef name,
                     std::optional<llvm::ArrayRef<int64_t>> fallback) {
  const json::Object *arg = argument(name);
  if (!arg || arg->get("as_none")) {
    if (fallback)
      return llvm::SmallVector<int64_t>(*fallback);
    return error() << "argument '" << name << "' must be a list of ints";
  }
  const json::Array *list = arg->getArray("as_ints");
  if (!list)
    list = arg->getArray("as_sym_ints");
  llvm::SmallVector<int64_t> result;
  if (!list) {
    // An int where the schema takes int[] (max_pool2d's padding=1).
    if (std::optional<int64_t> i = getJsonInteger(*arg, "as_int"))
      return llvm::SmallVector<int64_t>{*i};
    return error() << "argument '" << name << "' must be a list of ints";
  }
  for (const json::Value &v : *list) {
    std::optional<int64_t> i = intOf(v, importer);
    if (!i)
      return error() << "argument '" << name
                     << "' holds a size this importer cannot evaluate";
    result.push_back(*i);
  }
  return result;
}

FailureOr<double> NodeBinder::real(llvm::StringRef name,
                                   std::optional<double> fallback) {
  const json::Object *arg = argument(name);
  if (!arg || arg->get("as_none")) {
    if (fallback)
      return *fallback;
    return error() << "argument '" << name << "' must be a number";
  }
  if (const json::Value *f = arg->get("as_float"))
    if (std::optional<double> d = floatOf(*f))
      return *d;
  if (std::optional<int64_t> i = getJsonInteger(*arg, "as_int"))
    return double(*i);
  return error() << "argument '" << name << "' must be a number";
}

FailureOr<std::optional<llvm::SmallVector<double>>>
NodeBinder::optionalReals(llvm::StringRef name) {
  const json::Object *arg = argument(name);
  if (!arg || arg->get("as_none"))
    return std::optional<llvm::SmallVector<double>>();
  const json::Array *list = arg->getArray("as_floats");
  if (!list)
    return error() << "argument '" << name << "' must be a list of floats";
  llvm::SmallVector<double> result;
  for (const json::Value &v : *list) {
    std::optional<double> d = floatOf(v);
    if (!d)
      return error() << "argument '" << name << "' must be a list of floats";
    result.push_back(*d);
  }
  return std::optional<llvm::SmallVector<double>>(std::move(result));
}

FailureOr<bool> NodeBinder::boolean(llvm::StringRef name,
                                    std::optional<bool> fallback) {
  const json::Object *arg = argument(name);
  if (!arg || arg->get("as_none")) {
    if (fallback)
      return *fallback;
    return error() << "argument '" << name << "' must be a bool";
  }
  if (std::optional<bool> v = arg->getBoolean("as_bool"))
    return *v;
  return error() << "argument '" << name << "' must be a bool";
}

FailureOr<std::string>
NodeBinder::string(llvm::StringRef name,
                   std::optional<llvm::StringRef> fallback) {
  const json::Object *arg = argument(name);
  if (!arg || arg->get("as_none")) {
    if (fallback)
      return fallback->str();
    return error() << "argument '" << name << "' must be a string";
  }
  if (std::optional<llvm::StringRef> s = arg->getString("as_string"))
    return s->str();
  return error() << "argument '" << name << "' must be a string";
}

FailureOr<Value> NodeBinder::tensorOrNumber(llvm::StringRef name,
                                            Type elementType) {
  const json::Object *arg = argument(name);
  if (arg && (arg->get("as_tensor") || arg->get("as_optional_tensor"))) {
    consumed.erase(name);
    return tensor(name);
  }
  FailureOr<double> number = real(name);
  if (failed(number))
    return failure();
  auto type = RankedTensorType::get({}, elementType);
  Attribute value;
  if (auto ft = dyn_cast<FloatType>(elementType)) {
    llvm::APFloat f(*number);
    bool lost;
    f.convert(ft.getFloatSemantics(), llvm::APFloat::rmNearestTiesToEven,
              &lost);
    value = DenseElementsAttr::get(type, f);
  } else {
    return error() << "a number operand needs a floating-point tensor";
  }
  return nn::ConstantOp::create(getBuilder(), loc, cast<ElementsAttr>(value),
                                /*wrapped_number=*/true)
      .getResult();
}

FailureOr<Value> NodeBinder::reshape(Value v, llvm::ArrayRef<int64_t> shape) {
  auto in = cast<RankedTensorType>(v.getType());
  llvm::SmallVector<int64_t> dims(shape);
  // One -1 takes what the others leave.
  int64_t known = 1, inferred = -1;
  for (auto [k, d] : llvm::enumerate(dims)) {
    if (d == -1 && inferred < 0) {
      inferred = k;
      continue;
    }
    if (d < 0 || llvm::MulOverflow(known, d, known))
      return error() << "cannot view " << in << " as ["
                     << llvm::make_range(shape.begin(), shape.end()) << "]";
  }
  if (inferred >= 0) {
    if (known == 0 || in.getNumElements() % known)
      return error() << "cannot view " << in << " with a -1 size";
    dims[inferred] = in.getNumElements() / known;
    known *= dims[inferred];
  }
  if (known != in.getNumElements())
    return error() << "cannot view " << in << " as [" << dims.size()
                   << " dims holding " << known << " elements]";
  if (in.getShape() == llvm::ArrayRef(dims))
    return v;
  auto out = RankedTensorType::get(dims, in.getElementType());
  return nn::ReshapeOp::create(getBuilder(), loc, out, v).getResult();
}

/// The output entries of the node, lists flattened.
static llvm::SmallVector<const json::Value *>
outputEntries(const json::Object &node) {
  llvm::SmallVector<const json::Value *> entries;
  if (const json::Array *outputs = node.getArray("outputs"))
    for (const json::Value &o : *outputs) {
      const json::Object *obj = o.getAsObject();
      if (obj && obj->getArray("as_tensors")) {
        for (const json::Value &t : *obj->getArray("as_tensors"))
          entries.push_back(&t);
        continue;
      }
      entries.push_back(&o);
    }
  return entries;
}

LogicalResult NodeBinder::setResults(llvm::ArrayRef<Value> results) {
  llvm::SmallVector<const json::Value *> entries = outputEntries(node);
  if (entries.size() != results.size())
    return error() << "has " << entries.size() << " outputs, the converter "
                   << "made " << results.size();
  for (auto [entry, v] : llvm::zip(entries, results)) {
    std::optional<llvm::StringRef> name;
    if (const json::Object *o = entry->getAsObject()) {
      if (o->get("as_none"))
        continue;
      name = o->getString("name");
      if (!name)
        name = nameOf(o->get("as_tensor"));
    }
    if (!name)
      return error() << "an output is not a tensor";
    if (failed(importer.checkMetadata(*name, v, loc)))
      return failure();
    importer.setValue(*name, v);
  }
  resultSet = true;
  return success();
}

LogicalResult NodeBinder::setResult(Value v) { return setResults({v}); }

bool NodeBinder::requiresGrad(Value v) {
  // Memoized over the values built so far: parameters that train, and what
  // is computed from them.
  auto &memo = importer.gradMemo;
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  bool result = false;
  if (Operation *def = v.getDefiningOp()) {
    if (auto param = dyn_cast<nn::ParamOp>(def))
      result = param.getTrainable();
    else if (!isa<nn::BufferOp, nn::ConstantOp>(def))
      result = llvm::any_of(def->getOperands(), [&](Value operand) {
        return requiresGrad(operand);
      });
  }
  memo[v] = result;
  return result;
}

LogicalResult NodeBinder::setNoGradResult() { return setConstantResult(true); }
LogicalResult NodeBinder::setFactoryResult() {
  return setConstantResult(false);
}

LogicalResult NodeBinder::setConstantResult(bool checkGrad) {
  if (const json::Array *inputs = node.getArray("inputs"))
    for (const json::Value &input : *inputs) {
      const json::Object *o = input.getAsObject();
      std::optional<llvm::StringRef> name = o ? o->getString("name") : "";
      if (!name)
        continue;
      consumed.insert(*name);
      const json::Object *arg = o->getObject("arg");
      llvm::SmallVector<llvm::StringRef> tensorNames;
      if (std::optional<llvm::StringRef> t =
              arg ? nameOf(arg->get("as_tensor")) : std::nullopt)
        tensorNames.push_back(*t);
      if (const json::Array *list = arg ? arg->getArray("as_tensors") : nullptr)
        for (const json::Value &t : *list)
          if (std::optional<llvm::StringRef> n = nameOf(&t))
            tensorNames.push_back(*n);
      for (llvm::StringRef t : tensorNames) {
        FailureOr<Value> v = importer.valueOf(t, loc);
        if (failed(v))
          return failure();
        if (checkGrad && requiresGrad(*v))
          return error() << "argument '" << *name
                         << "' requires grad: this op is only modelled on "
                            "tensors that do not";
      }
    }
  FailureOr<RankedTensorType> type = resultType();
  if (failed(type))
    return failure();
  Attribute zero = getBuilder().getZeroAttr(type->getElementType());
  if (!zero)
    return error() << "cannot make a tensor of " << *type;
  auto value = DenseElementsAttr::get(*type, zero);
  return setResult(nn::ConstantOp::create(getBuilder(), loc,
                                          cast<ElementsAttr>(value),
                                          /*wrapped_number=*/false));
}

FailureOr<RankedTensorType> NodeBinder::resultType() {
  llvm::SmallVector<const json::Value *> entries = outputEntries(node);
  const json::Object *o =
      entries.size() == 1 ? entries[0]->getAsObject() : nullptr;
  std::optional<llvm::StringRef> name =
      o ? nameOf(o->get("as_tensor")) : std::nullopt;
  if (!name)
    return error() << "the output is not a tensor";
  return importer.tensorType(*name, loc);
}

LogicalResult NodeBinder::setInteger(int64_t value) {
  llvm::SmallVector<const json::Value *> entries = outputEntries(node);
  const json::Object *o =
      entries.size() == 1 ? entries[0]->getAsObject() : nullptr;
  const json::Object *sym = o ? o->getObject("as_sym_int") : nullptr;
  std::optional<llvm::StringRef> name =
      sym ? sym->getString("as_name") : std::nullopt;
  if (!name)
    return error() << "the output is not a symbolic int";
  importer.setSymbolicInt(*name, value);
  resultSet = true;
  return success();
}

bool NodeBinder::isNoneResult() const {
  return llvm::all_of(outputEntries(node), [](const json::Value *e) {
    const json::Object *o = e->getAsObject();
    return o && o->get("as_none");
  });
}

LogicalResult NodeBinder::finish() {
  if (const json::Array *inputs = node.getArray("inputs"))
    for (const json::Value &input : *inputs) {
      const json::Object *o = input.getAsObject();
      std::optional<llvm::StringRef> name = o ? o->getString("name") : "";
      if (name && !consumed.contains(*name))
        return error() << "argument '" << *name
                       << "' is not modelled by this converter";
    }
  if (!resultSet && !isNoneResult())
    return error() << "the converter bound no result";
  return success();
}

//===----------------------------------------------------------------------===//
// Importer
//===----------------------------------------------------------------------===//

Importer::Importer(MLIRContext *context, llvm::StringRef filename,
                   const ExportImportOptions &options)
    : ctx(context), b(context), opts(options), filename(filename.str()),
      fileLoc(FileLineColLoc::get(context, filename, 0, 0)) {}

std::optional<int64_t> Importer::symbolicInt(llvm::StringRef name) const {
  auto it = symInts.find(name);
  if (it == symInts.end())
    return std::nullopt;
  return it->second;
}

FailureOr<Type> Importer::elementType(int64_t scalarType, Location loc) {
  // torch/_export/serde/schema.py ScalarType.
  switch (scalarType) {
  case 1:
    return Type(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  case 2:
    return Type(IntegerType::get(ctx, 8));
  case 3:
    return Type(IntegerType::get(ctx, 16));
  case 4:
    return Type(IntegerType::get(ctx, 32));
  case 5:
    return Type(IntegerType::get(ctx, 64));
  case 6:
    return Type(Float16Type::get(ctx));
  case 7:
    return Type(Float32Type::get(ctx));
  case 8:
    return Type(Float64Type::get(ctx));
  case 12:
    return Type(IntegerType::get(ctx, 1));
  case 13:
    return Type(BFloat16Type::get(ctx));
  default:
    return emitError(loc) << "tensor dtype " << scalarType
                          << " (torch.export ScalarType) is not supported";
  }
}

std::optional<int64_t> Importer::evaluateSize(const json::Value &size) const {
  const json::Object *o = size.getAsObject();
  if (!o)
    return std::nullopt;
  if (std::optional<int64_t> i = getJsonInteger(*o, "as_int"))
    return i;
  const json::Object *expr = o->getObject("as_expr");
  std::optional<llvm::StringRef> text =
      expr ? expr->getString("expr_str") : std::nullopt;
  if (!text)
    return std::nullopt;
  return SizeExpression(*text, symbols).evaluate();
}

FailureOr<RankedTensorType> Importer::tensorType(llvm::StringRef name,
                                                 Location loc) {
  const json::Object *meta =
      tensorValues ? tensorValues->getObject(name) : nullptr;
  if (!meta)
    return emitError(loc) << "tensor '" << name << "' has no metadata";
  std::optional<int64_t> dtype = getJsonInteger(*meta, "dtype");
  const json::Array *sizes = meta->getArray("sizes");
  if (!dtype || !sizes)
    return emitError(loc) << "tensor '" << name
                          << "' has no dtype or sizes in its metadata";
  FailureOr<Type> elem = elementType(*dtype, loc);
  if (failed(elem))
    return failure();
  llvm::SmallVector<int64_t> shape;
  for (const json::Value &s : *sizes) {
    std::optional<int64_t> d = evaluateSize(s);
    if (!d || *d < 0 || *d > (int64_t(1) << 40))
      return emitError(loc)
             << "tensor '" << name << "' has a size this importer cannot bind";
    shape.push_back(*d);
  }
  return RankedTensorType::get(shape, *elem);
}

LogicalResult Importer::checkMetadata(llvm::StringRef name, Value v,
                                      Location loc) {
  const json::Object *meta =
      tensorValues ? tensorValues->getObject(name) : nullptr;
  if (!meta)
    return success();
  auto type = cast<RankedTensorType>(v.getType());
  auto mismatch = [&]() {
    return emitError(loc) << "tensor '" << name << "': the converter made "
                          << type << ", the archive records ";
  };
  if (std::optional<int64_t> dtype = getJsonInteger(*meta, "dtype")) {
    FailureOr<Type> elem = elementType(*dtype, loc);
    if (failed(elem))
      return failure();
    if (*elem != type.getElementType())
      return mismatch() << "dtype " << *elem;
  }
  const json::Array *sizes = meta->getArray("sizes");
  if (!sizes)
    return success();
  bool same = (int64_t)sizes->size() == type.getRank();
  std::string recorded;
  for (auto [k, s] : llvm::enumerate(*sizes)) {
    std::optional<int64_t> d = evaluateSize(s);
    recorded += (k ? "x" : "") + (d ? std::to_string(*d) : std::string("?"));
    same = same && (!d || *d == type.getDimSize(k));
  }
  if (!same)
    return mismatch() << "sizes " << recorded;
  return success();
}

FailureOr<Value> Importer::valueOf(llvm::StringRef name, Location loc) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto state = stateByName.find(name);
  if (state == stateByName.end())
    return emitError(loc) << "tensor '" << name
                          << "' is used before it is computed";
  // Parameters and buffers on first use, named by their module.
  const Input &input = *state->second;
  FailureOr<RankedTensorType> type = tensorType(name, loc);
  if (failed(type))
    return failure();
  auto [module, leaf] = llvm::StringRef(input.fullName).rsplit('.');
  Location stateLoc = NameLoc::get(
      StringAttr::get(ctx, leaf.empty() ? input.fullName : module.str()),
      fileLoc);
  Value v;
  if (input.kind == Input::Parameter) {
    if (!isa<FloatType>(type->getElementType()))
      return emitError(loc)
             << "parameter '" << input.fullName << "' is not floating-point";
    // A parameter stored in the same file as one built before is that
    // parameter (tied weights: GPT-2's lm_head and wte).
    auto file = weightFileOf.find(input.fullName);
    if (file != weightFileOf.end())
      if (Value tied = parameterInFile.lookup(file->second);
          tied && tied.getType() == *type) {
        values[name] = tied;
        return tied;
      }
    v = nn::ParamOp::create(b, stateLoc, *type, input.fullName,
                            /*trainable=*/true);
    if (file != weightFileOf.end())
      parameterInFile[file->second] = v;
  } else {
    v = nn::BufferOp::create(b, stateLoc, *type, input.fullName);
  }
  values[name] = v;
  return v;
}

LogicalResult Importer::readSignature(const json::Object &signature) {
  const json::Array *inputSpecs = signature.getArray("input_specs");
  const json::Array *outputSpecs = signature.getArray("output_specs");
  if (!inputSpecs || !outputSpecs)
    return emitError(fileLoc) << "the graph signature has no input_specs or "
                                 "output_specs";
  for (const json::Value &spec : *inputSpecs) {
    auto member = unionMember(spec);
    const json::Object *body = member ? member->second->getAsObject() : nullptr;
    if (!body)
      return emitError(fileLoc) << "malformed input spec";
    llvm::StringRef kind = member->first;
    const json::Object *arg = body->getObject("arg");
    if (kind == "constant_input")
      continue;
    if (kind == "user_input") {
      // {"arg": {"as_tensor": {"name": "x"}}}; other arguments (ints,
      // bools) were specialized into the graph.
      std::optional<llvm::StringRef> name =
          arg ? nameOf(arg->get("as_tensor")) : std::nullopt;
      if (name)
        inputs.push_back({name->str(), name->str(), Input::User});
      continue;
    }
    std::optional<llvm::StringRef> name =
        arg ? arg->getString("name") : std::nullopt;
    std::optional<llvm::StringRef> target;
    Input::Kind k = Input::Buffer;
    if (kind == "parameter") {
      target = body->getString("parameter_name");
      k = Input::Parameter;
    } else if (kind == "buffer") {
      target = body->getString("buffer_name");
    } else if (kind == "tensor_constant") {
      // A tensor attribute of a module: held like a buffer.
      target = body->getString("tensor_constant_name");
    } else {
      return emitError(fileLoc)
             << "input kind '" << kind << "' is not supported";
    }
    if (!name || !target)
      return emitError(fileLoc) << "malformed " << kind << " input spec";
    inputs.push_back({name->str(), target->str(), k});
  }
  for (const Input &input : inputs)
    if (input.kind != Input::User)
      stateByName[input.name] = &input;
  for (const json::Value &spec : *outputSpecs) {
    auto member = unionMember(spec);
    const json::Object *body = member ? member->second->getAsObject() : nullptr;
    if (!body)
      return emitError(fileLoc) << "malformed output spec";
    if (member->first == "loss_output")
      return emitError(fileLoc)
             << "the program computes its loss (a joint graph): export the "
                "model's forward, vram-opt adds the loss and the backward";
    if (member->first != "user_output")
      continue; // buffer and input mutations alias state already counted
    const json::Object *arg = body->getObject("arg");
    if (std::optional<llvm::StringRef> name =
            arg ? nameOf(arg->get("as_tensor")) : std::nullopt)
      outputNames.push_back(name->str());
  }
  if (outputNames.empty())
    return emitError(fileLoc) << "the program has no tensor output";
  return success();
}

LogicalResult Importer::bindSymbols() {
  // Explicit --dim bindings first, then --batch and --seq by position, then
  // the example sizes the program was exported with.
  for (const auto &dim : opts.dims)
    symbols[dim.getKey()] = dim.getValue();
  for (const Input &input : inputs) {
    if (input.kind != Input::User)
      continue;
    const json::Object *meta = tensorValues->getObject(input.name);
    const json::Array *sizes = meta ? meta->getArray("sizes") : nullptr;
    std::optional<int64_t> dtype =
        meta ? getJsonInteger(*meta, "dtype") : std::nullopt;
    if (!sizes || !dtype)
      return emitError(fileLoc)
             << "input '" << input.name << "' has no sizes in its metadata";
    bool integerInput = *dtype >= 1 && *dtype <= 5;
    for (auto [k, size] : llvm::enumerate(*sizes)) {
      const json::Object *o = size.getAsObject();
      const json::Object *expr = o ? o->getObject("as_expr") : nullptr;
      if (!expr)
        continue;
      std::optional<llvm::StringRef> text = expr->getString("expr_str");
      std::optional<llvm::StringRef> symbol =
          text ? SizeExpression::plainSymbol(*text) : std::nullopt;
      if (!symbol)
        return emitError(fileLoc)
               << "input '" << input.name << "' dimension " << k
               << " is the expression '" << (text ? *text : "")
               << "', not a symbol: bind its symbols with --dim";
      if (opts.symbols)
        opts.symbols->insert(*symbol);
      bool isBatch = k == 0;
      if (!symbols.count(*symbol)) {
        std::optional<int64_t> value;
        if (isBatch && opts.batch)
          value = opts.batch;
        else if (k == 1 && integerInput && opts.seq)
          value = opts.seq;
        if (!value) {
          const json::Object *hint = expr->getObject("hint");
          value = hint ? getJsonInteger(*hint, "as_int") : std::nullopt;
          if (!value)
            return emitError(fileLoc)
                   << "input '" << input.name << "' dimension " << k
                   << " is symbolic ('" << *symbol
                   << "') with no example size: bind it with --dim " << *symbol
                   << "=N";
          emitFinding(NameLoc::get(StringAttr::get(ctx, input.name), fileLoc),
                      rules::kDefaultBoundDimension)
              << "input '" << input.name << "' dimension " << k
              << " is symbolic ('" << *symbol
              << "') and bound to the example size " << *value << "; set it "
              << "with "
              << (isBatch                  ? "--batch=N"
                  : k == 1 && integerInput ? "--seq=N"
                                           : "--dim")
              << (isBatch || (k == 1 && integerInput)
                      ? ""
                      : " " + symbol->str() + "=N");
        }
        symbols[*symbol] = *value;
      }
      if (isBatch && !boundBatch)
        boundBatch = symbols[*symbol];
    }
  }
  // Every binding inside the range the program was exported for.
  for (const auto &symbol : symbols) {
    const json::Object *range =
        rangeConstraints ? rangeConstraints->getObject(symbol.getKey())
                         : nullptr;
    if (!range)
      continue;
    std::optional<int64_t> lo = getJsonInteger(*range, "min_val");
    std::optional<int64_t> hi = getJsonInteger(*range, "max_val");
    int64_t v = symbol.getValue();
    if ((lo && v < *lo) || (hi && v > *hi)) {
      auto diag = emitError(fileLoc)
                  << "symbolic dimension '" << symbol.getKey() << "' = " << v
                  << " is outside the range the program was exported for [";
      diag << (lo ? std::to_string(*lo) : "-inf") << ", "
           << (hi ? std::to_string(*hi) : "inf") << "]";
      return failure();
    }
  }
  return success();
}

Location Importer::nodeLocation(const json::Object &node,
                                llvm::StringRef nodeName) {
  const json::Object *metadata = node.getObject("metadata");
  std::string layer;
  Location where = fileLoc;
  if (metadata) {
    if (std::optional<llvm::StringRef> stack =
            metadata->getString("nn_module_stack"))
      layer = modulePath(*stack);
    if (std::optional<llvm::StringRef> trace =
            metadata->getString("stack_trace"))
      if (auto frame = sourceFrame(*trace))
        where = FileLineColLoc::get(ctx, frame->first, frame->second, 1);
  }
  if (layer.empty())
    layer = nodeName.str();
  return NameLoc::get(StringAttr::get(ctx, layer), where);
}

LogicalResult Importer::convertNode(const json::Object &node, unsigned index) {
  std::optional<llvm::StringRef> fullTarget = node.getString("target");
  std::string nodeName = node.getString("name").value_or("").str();
  if (nodeName.empty())
    nodeName = "#" + std::to_string(index);
  if (!fullTarget)
    return emitError(fileLoc) << "node '" << nodeName << "' has no target";
  llvm::StringRef target = *fullTarget;
  target.consume_front("torch.ops.");
  Location loc = nodeLocation(node, nodeName);
  ConverterFn convert = ConverterTable::get().lookup(target);
  if (!convert) {
    InFlightDiagnostic diag = emitError(loc)
                              << "node '" << nodeName << "': " << target
                              << " has no converter (docs/TorchExport.md)";
    diag.attachNote() << "supported ops: "
                      << llvm::join(ConverterTable::get().targets(), ", ");
    return diag;
  }
  NodeBinder binder(*this, node, nodeName, target, loc);
  if (failed(convert(binder)))
    return failure();
  return binder.finish();
}

OwningOpRef<ModuleOp> Importer::run(llvm::StringRef bytes) {
  llvm::Expected<ArchiveModel> archive = readArchiveModel(bytes);
  if (!archive) {
    emitError(fileLoc) << llvm::toString(archive.takeError());
    return nullptr;
  }
  return runProgram(archive->entryName, archive->json, archive->weightsConfig);
}

OwningOpRef<ModuleOp>
Importer::runProgram(llvm::StringRef entryName, llvm::StringRef text,
                     std::optional<llvm::StringRef> weightsConfig) {
  // {"config": {"lm_head.weight": {"path_name": "weight_0", ...}, ...}}:
  // tied parameters name one file. A config that does not parse only loses
  // the ties.
  if (weightsConfig) {
    if (llvm::Expected<json::Value> config = json::parse(*weightsConfig)) {
      const json::Object *root = config->getAsObject();
      if (const json::Object *entries =
              root ? root->getObject("config") : nullptr)
        for (const auto &[fqn, entry] : *entries)
          if (const json::Object *o = entry.getAsObject())
            if (std::optional<llvm::StringRef> file = o->getString("path_name"))
              weightFileOf[llvm::StringRef(fqn)] = file->str();
    } else {
      llvm::consumeError(config.takeError());
    }
  }
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    emitError(fileLoc) << entryName << ": "
                       << llvm::toString(parsed.takeError());
    return nullptr;
  }
  const json::Object *program = parsed->getAsObject();
  if (!program) {
    emitError(fileLoc) << entryName << " is not a JSON object";
    return nullptr;
  }
  const json::Object *version = program->getObject("schema_version");
  std::optional<int64_t> major =
      version ? getJsonInteger(*version, "major") : std::nullopt;
  std::optional<int64_t> minor =
      version ? getJsonInteger(*version, "minor") : std::nullopt;
  if (!major || !minor) {
    emitError(fileLoc) << entryName << " has no schema_version";
    return nullptr;
  }
  if (*major != kSchemaMajorVersion) {
    emitError(fileLoc) << "the exported program's schema version is " << *major
                       << "." << *minor << "; this vram-opt reads "
                       << kSchemaMajorVersion
                       << ".x (torch.export of torch 2.15 writes 8.20)";
    return nullptr;
  }
  const json::Object *graphModule = program->getObject("graph_module");
  graph = graphModule ? graphModule->getObject("graph") : nullptr;
  const json::Object *signature =
      graphModule ? graphModule->getObject("signature") : nullptr;
  tensorValues = graph ? graph->getObject("tensor_values") : nullptr;
  const json::Array *nodes = graph ? graph->getArray("nodes") : nullptr;
  if (!graph || !signature || !tensorValues || !nodes) {
    emitError(fileLoc) << entryName
                       << " has no graph, signature, tensor_values or nodes";
    return nullptr;
  }
  rangeConstraints = program->getObject("range_constraints");
  if (failed(readSignature(*signature)) || failed(bindSymbols()))
    return nullptr;

  // forward(user inputs).
  llvm::SmallVector<Type> argTypes;
  llvm::SmallVector<const Input *> userInputs;
  for (const Input &input : inputs) {
    if (input.kind != Input::User)
      continue;
    FailureOr<RankedTensorType> type = tensorType(input.name, fileLoc);
    if (failed(type))
      return nullptr;
    argTypes.push_back(*type);
    userInputs.push_back(&input);
  }
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, fileLoc, "forward",
                                   FunctionType::get(ctx, argTypes, {}));
  if (boundBatch)
    func->setAttr(nn::NNDialect::kBatchAttrName,
                  b.getI64IntegerAttr(*boundBatch));
  Block *body = func.addEntryBlock();
  for (auto [k, input] : llvm::enumerate(userInputs)) {
    body->getArgument(k).setLoc(
        NameLoc::get(StringAttr::get(ctx, input->name), fileLoc));
    values[input->name] = body->getArgument(k);
  }
  b.setInsertionPointToEnd(body);

  for (auto [k, node] : llvm::enumerate(*nodes)) {
    const json::Object *n = node.getAsObject();
    if (!n) {
      emitError(fileLoc) << "node " << k << " is not an object";
      return nullptr;
    }
    if (failed(convertNode(*n, k)))
      return nullptr;
  }
  // Parameters and buffers no op used still take memory.
  for (const Input &input : inputs)
    if (input.kind != Input::User && failed(valueOf(input.name, fileLoc)))
      return nullptr;

  llvm::SmallVector<Value> results;
  for (const std::string &name : outputNames) {
    FailureOr<Value> v = valueOf(name, fileLoc);
    if (failed(v))
      return nullptr;
    results.push_back(*v);
  }
  func::ReturnOp::create(b, fileLoc, results);
  func.setFunctionType(
      FunctionType::get(ctx, argTypes, TypeRange(ValueRange(results))));
  // A model over token ids [B, T] returning [B, T, V] scores each token: its
  // loss is per token (as the zoo's and --hf's language models). Of several
  // outputs, the first (a transformers ModelOutput's logits, when no loss
  // is computed) is judged.
  {
    auto out = cast<RankedTensorType>(results[0].getType());
    bool perToken = llvm::any_of(argTypes, [&](Type t) {
      auto in = cast<RankedTensorType>(t);
      return isa<IntegerType>(in.getElementType()) && in.getRank() == 2 &&
             out.getRank() == 3 &&
             out.getShape().take_front(2) == in.getShape();
    });
    if (perToken)
      func->setAttr(nn::NNDialect::kSequenceLogitsAttrName, b.getUnitAttr());
  }
  if (failed(verify(*module)))
    return nullptr;
  // PyTorch's implicit copies of strided views, as for every front end.
  vram::insertContiguousCopies(func);
  return module;
}

OwningOpRef<ModuleOp> vram::torch_export::importExportedProgram(
    MLIRContext *context, llvm::StringRef bytes, llvm::StringRef filename,
    const ExportImportOptions &options) {
  context->loadDialect<nn::NNDialect, func::FuncDialect>();
  return Importer(context, filename, options).run(bytes);
}
