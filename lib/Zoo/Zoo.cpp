//===- Zoo.cpp - built-in model architectures -----------------------------===//
//
// The registry of zoo models: option defaults and validation, and the module
// around each model's `forward`. The models themselves are in the other files
// of this directory.
//
//===----------------------------------------------------------------------===//

#include "vram/Zoo/Zoo.h"

#include "Models.h"

#include "vram/Dialect/NN/NNDialect.h"
#include "vram/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Twine.h"

#include <vector>

using namespace mlir;
using namespace vram::zoo;

namespace {

enum class Kind { Vision, Language };

using BuildFn = Value (*)(ModelBuilder &, Value, const ModelConfig &);

struct ModelEntry {
  ZooModelInfo info;
  Kind kind;
  BuildFn build;
  /// Vision: default image side, the smallest side whose feature maps do not
  /// vanish, and the multiple the side must be (patch size).
  int64_t defaultImage = 224, minImage = 1, imageMultiple = 1;
  int64_t defaultClasses = 1000;
  /// Language: default sequence length and the size of a learned position
  /// table, which bounds it (0: unbounded).
  int64_t defaultSeq = 0, maxSeq = 0;
};

ModelEntry vision(StringRef name, StringRef description, BuildFn build,
                  int64_t minImage = 1, int64_t imageMultiple = 1,
                  int64_t defaultImage = 224, int64_t defaultClasses = 1000) {
  ModelEntry e{{name, description}, Kind::Vision, build};
  e.defaultImage = defaultImage;
  e.defaultClasses = defaultClasses;
  e.minImage = minImage;
  e.imageMultiple = imageMultiple;
  return e;
}

ModelEntry language(StringRef name, StringRef description, BuildFn build,
                    int64_t defaultSeq, int64_t maxSeq) {
  ModelEntry e{{name, description}, Kind::Language, build};
  e.defaultSeq = defaultSeq;
  e.maxSeq = maxSeq;
  return e;
}

const std::vector<ModelEntry> &registry() {
  static const std::vector<ModelEntry> models = {
      vision("resnet18", "torchvision ResNet-18 (BasicBlock [2,2,2,2])",
             buildResNet18),
      vision("resnet34", "torchvision ResNet-34 (BasicBlock [3,4,6,3])",
             buildResNet34),
      vision("resnet50", "torchvision ResNet-50 v1.5 (Bottleneck [3,4,6,3])",
             buildResNet50),
      vision("resnet101", "torchvision ResNet-101 v1.5 (Bottleneck [3,4,23,3])",
             buildResNet101),
      vision("resnet152", "torchvision ResNet-152 v1.5 (Bottleneck [3,8,36,3])",
             buildResNet152),
      // Five 2x2 max pools need a 32-pixel side.
      vision("vgg16", "torchvision VGG-16 without BatchNorm", buildVgg16, 32),
      vision("mobilenet_v2", "torchvision MobileNetV2 (width 1.0)",
             buildMobileNetV2),
      vision("vit_b_16", "torchvision ViT-B/16 (image side a multiple of 16)",
             buildVitB16, 16, 16),
      language("gpt2", "GPT-2 small, 124M (HuggingFace GPT2LMHeadModel)",
               buildGpt2, 1024, kGpt2Positions),
      language("llama-7b", "LLaMA-7B (HuggingFace LlamaForCausalLM)",
               buildLlama7b, 2048, 0),
      language("gpt_mini",
               "4-layer GPT decoder of the reference measurements (7.4M)",
               buildGptMini, 128, kGptMiniPositions),
      // Two 2x2 max pools need a 4-pixel side.
      vision("tiny_cnn", "small CNN for tests (32x32 input, 10 classes)",
             buildTinyCnn, 4, 1, 32, 10),
      language("tiny_gpt", "2-layer GPT-2 for tests (d=64, vocab 256)",
               buildTinyGpt, 32, kTinyGptPositions),
  };
  return models;
}

llvm::Error error(const Twine &message) {
  return llvm::createStringError(message);
}

/// Applies defaults and checks `options` against `model`.
llvm::Expected<ModelConfig> resolve(const ModelEntry &model,
                                    const ZooOptions &options) {
  StringRef name = model.info.name;
  ModelConfig c{options.batch, 0, 0, 0, options.target};
  if (c.batch < 1)
    return error("batch size must be >= 1, got " + Twine(c.batch));

  if (model.kind == Kind::Language) {
    if (options.imageSize)
      return error(name + " is a language model: it takes no image size");
    if (options.numClasses)
      return error(name + " is a language model: it takes no number of "
                          "classes");
    c.seq = options.seq.value_or(model.defaultSeq);
    if (c.seq < 1)
      return error("sequence length must be >= 1, got " + Twine(c.seq));
    if (model.maxSeq && c.seq > model.maxSeq)
      return error(name + " has " + Twine(model.maxSeq) +
                   " learned positions: sequence length " + Twine(c.seq) +
                   " is too long");
    return c;
  }

  if (options.seq)
    return error(name + " is a vision model: it takes no sequence length");
  c.imageSize = options.imageSize.value_or(model.defaultImage);
  c.numClasses = options.numClasses.value_or(model.defaultClasses);
  if (c.imageSize < model.minImage)
    return error(name + " needs an image size >= " + Twine(model.minImage) +
                 ", got " + Twine(c.imageSize));
  if (c.imageSize % model.imageMultiple)
    return error(name + " needs an image size that is a multiple of " +
                 Twine(model.imageMultiple) + ", got " + Twine(c.imageSize));
  if (c.numClasses < 1)
    return error("number of classes must be >= 1, got " + Twine(c.numClasses));
  return c;
}

} // namespace

llvm::ArrayRef<ZooModelInfo> vram::zoo::listModels() {
  static const std::vector<ZooModelInfo> infos = [] {
    std::vector<ZooModelInfo> result;
    for (const ModelEntry &model : registry())
      result.push_back(model.info);
    return result;
  }();
  return infos;
}

llvm::Expected<OwningOpRef<ModuleOp>>
vram::zoo::buildModel(MLIRContext *context, StringRef name,
                      const ZooOptions &options) {
  const auto &models = registry();
  auto model = llvm::find_if(
      models, [&](const ModelEntry &m) { return m.info.name == name; });
  if (model == models.end()) {
    std::string names;
    for (const ModelEntry &m : models)
      names += (names.empty() ? "" : ", ") + m.info.name.str();
    return error("unknown zoo model '" + name + "' (available: " + names + ")");
  }

  llvm::Expected<ModelConfig> config = resolve(*model, options);
  if (!config)
    return config.takeError();

  context->getOrLoadDialect<vram::nn::NNDialect>();
  context->getOrLoadDialect<func::FuncDialect>();
  OpBuilder b(context);
  Location loc = NameLoc::get(b.getStringAttr("zoo:" + name));

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr(vram::nn::NNDialect::kModelAttrName,
                     b.getStringAttr(name));

  Type inputType =
      model->kind == Kind::Vision
          ? Type(RankedTensorType::get(
                {config->batch, 3, config->imageSize, config->imageSize},
                b.getF32Type()))
          : Type(RankedTensorType::get({config->batch, config->seq},
                                       b.getI64Type()));
  b.setInsertionPointToEnd(module->getBody());
  auto forward =
      func::FuncOp::create(b, loc, "forward", b.getFunctionType(inputType, {}));
  Block *entry = forward.addEntryBlock();
  forward.getArgument(0).setLoc(NameLoc::get(b.getStringAttr("input")));

  b.setInsertionPointToStart(entry);
  ModelBuilder mb(b);
  Value output = model->build(mb, forward.getArgument(0), *config);
  func::ReturnOp::create(b, output.getLoc(), output);
  forward.setFunctionType(b.getFunctionType(inputType, output.getType()));
  // PyTorch's implicit copies of strided views, as for every front end.
  vram::insertContiguousCopies(forward);
  forward->setAttr(vram::nn::NNDialect::kBatchAttrName,
                   b.getI64IntegerAttr(config->batch));
  // Language models return per-token logits; training flattens them.
  if (model->kind == Kind::Language)
    forward->setAttr(vram::nn::NNDialect::kSequenceLogitsAttrName,
                     b.getUnitAttr());
  return module;
}
