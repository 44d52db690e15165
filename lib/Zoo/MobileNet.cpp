//===- MobileNet.cpp - torchvision MobileNetV2 ----------------------------===//
//
// Follows torchvision/models/mobilenetv2.py with width_mult = 1 (all channel
// counts are already multiples of 8). Conv2dNormActivation is
// Sequential(conv, bn, ReLU6(inplace=True)), so its layers are `.0`, `.1`.
//
//===----------------------------------------------------------------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace vram::zoo;

namespace {

/// Conv2dNormActivation(cin, cout, kernel, stride, groups) named `name`.
Value convBnRelu6(ModelBuilder &mb, Value x, const Twine &name, int64_t cout,
                  int64_t kernel, int64_t stride = 1, int64_t groups = 1) {
  std::string prefix = name.str();
  x = mb.conv(x, prefix + ".0", cout, kernel, stride, (kernel - 1) / 2, groups);
  x = mb.batchNorm(x, prefix + ".1");
  return mb.relu6(x, prefix + ".2");
}

/// InvertedResidual(inp, oup, stride, expand_ratio) named `name`: optional
/// 1x1 expansion, 3x3 depthwise, linear 1x1 projection, all in `name.conv`.
Value invertedResidual(ModelBuilder &mb, Value x, const std::string &name,
                       int64_t oup, int64_t stride, int64_t expandRatio) {
  int64_t inp = ModelBuilder::shapeOf(x)[1];
  int64_t hidden = inp * expandRatio;
  std::string conv = name + ".conv";

  Value y = x;
  int index = 0;
  if (expandRatio != 1)
    y = convBnRelu6(mb, y, conv + "." + Twine(index++), hidden, 1);
  y = convBnRelu6(mb, y, conv + "." + Twine(index++), hidden, 3, stride,
                  hidden);
  y = mb.conv(y, conv + "." + Twine(index++).str(), oup, 1);
  y = mb.batchNorm(y, conv + "." + Twine(index++).str());

  // `x + self.conv(x)`: a new tensor, not in place.
  if (stride == 1 && inp == oup)
    y = mb.add(x, y, name + ".add");
  return y;
}

} // namespace

Value vram::zoo::buildMobileNetV2(ModelBuilder &mb, Value x,
                                  const ModelConfig &c) {
  struct Stage {
    int64_t expand, channels, repeats, stride;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2},
                          {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2},
                          {6, 320, 1, 1}};

  int index = 0;
  x = convBnRelu6(mb, x, "features." + Twine(index++), 32, 3, 2);
  for (const Stage &stage : stages)
    for (int64_t i = 0; i < stage.repeats; ++i)
      x = invertedResidual(mb, x, ("features." + Twine(index++)).str(),
                           stage.channels, i == 0 ? stage.stride : 1,
                           stage.expand);
  x = convBnRelu6(mb, x, "features." + Twine(index++), 1280, 1);

  x = mb.adaptiveAvgPool(x, "adaptive_avg_pool2d", 1, 1);
  x = mb.flatten(x, "flatten");
  x = mb.dropout(x, "classifier.0", 0.2);
  return mb.linear(x, "classifier.1", c.numClasses);
}
