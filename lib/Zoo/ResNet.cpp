//===- ResNet.cpp - torchvision ResNet-18/34/50/101/152 -------------------===//
//
// Follows torchvision/models/resnet.py: ReLU(inplace=True), the residual
// `out += identity` in place, the stride of a bottleneck on its 3x3 conv
// (ResNet v1.5), and a conv1x1 + BatchNorm downsample named
// `layerX.0.downsample.{0,1}`.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace vram::zoo;

namespace {

struct ResNetConfig {
  bool bottleneck;
  int64_t blocks[4];
};

/// BasicBlock (expansion 1) or Bottleneck (expansion 4), with its optional
/// downsample of the identity.
Value residualBlock(ModelBuilder &mb, Value x, const std::string &name,
                    int64_t planes, int64_t stride, bool bottleneck) {
  int64_t inplanes = ModelBuilder::shapeOf(x)[1];
  int64_t outplanes = bottleneck ? planes * 4 : planes;
  std::string relu = name + ".relu";

  Value out;
  if (bottleneck) {
    out = mb.conv(x, name + ".conv1", planes, 1);
    out = mb.relu(mb.batchNorm(out, name + ".bn1"), relu);
    out = mb.conv(out, name + ".conv2", planes, 3, stride, 1);
    out = mb.relu(mb.batchNorm(out, name + ".bn2"), relu);
    out = mb.conv(out, name + ".conv3", outplanes, 1);
    out = mb.batchNorm(out, name + ".bn3");
  } else {
    out = mb.conv(x, name + ".conv1", planes, 3, stride, 1);
    out = mb.relu(mb.batchNorm(out, name + ".bn1"), relu);
    out = mb.conv(out, name + ".conv2", planes, 3, 1, 1);
    out = mb.batchNorm(out, name + ".bn2");
  }

  Value identity = x;
  if (stride != 1 || inplanes != outplanes) {
    identity = mb.conv(x, name + ".downsample.0", outplanes, 1, stride);
    identity = mb.batchNorm(identity, name + ".downsample.1");
  }
  // `out += identity` is functional code of the block's own forward: its
  // location is the block, not an invented submodule.
  out = mb.add(out, identity, name, /*inplace=*/true);
  return mb.relu(out, relu);
}

Value buildResNet(ModelBuilder &mb, Value x, const ResNetConfig &config,
                  int64_t numClasses) {
  x = mb.conv(x, "conv1", 64, 7, 2, 3);
  x = mb.relu(mb.batchNorm(x, "bn1"), "relu");
  x = mb.maxPool(x, "maxpool", 3, 2, 1);

  for (int layer = 0; layer < 4; ++layer) {
    int64_t planes = 64 << layer;
    int64_t stride = layer == 0 ? 1 : 2;
    for (int64_t block = 0; block < config.blocks[layer]; ++block) {
      std::string name =
          ("layer" + Twine(layer + 1) + "." + Twine(block)).str();
      x = residualBlock(mb, x, name, planes, block == 0 ? stride : 1,
                        config.bottleneck);
    }
  }

  x = mb.adaptiveAvgPool(x, "avgpool", 1, 1);
  // torch.flatten in the model's own forward (the root module).
  x = mb.flatten(x, "");
  return mb.linear(x, "fc", numClasses);
}

} // namespace

Value vram::zoo::buildResNet18(ModelBuilder &mb, Value x,
                               const ModelConfig &c) {
  return buildResNet(mb, x, {false, {2, 2, 2, 2}}, c.numClasses);
}

Value vram::zoo::buildResNet34(ModelBuilder &mb, Value x,
                               const ModelConfig &c) {
  return buildResNet(mb, x, {false, {3, 4, 6, 3}}, c.numClasses);
}

Value vram::zoo::buildResNet50(ModelBuilder &mb, Value x,
                               const ModelConfig &c) {
  return buildResNet(mb, x, {true, {3, 4, 6, 3}}, c.numClasses);
}

Value vram::zoo::buildResNet101(ModelBuilder &mb, Value x,
                                const ModelConfig &c) {
  return buildResNet(mb, x, {true, {3, 4, 23, 3}}, c.numClasses);
}

Value vram::zoo::buildResNet152(ModelBuilder &mb, Value x,
                                const ModelConfig &c) {
  return buildResNet(mb, x, {true, {3, 8, 36, 3}}, c.numClasses);
}
