//===- VGG.cpp - torchvision VGG-16 and a tiny CNN for tests --------------===//

#include "Models.h"

#include "llvm/ADT/Twine.h"

using namespace mlir;
using namespace vram::zoo;

/// torchvision vgg16 (configuration "D", no BatchNorm). `features` is one
/// nn.Sequential, so its layers are numbered through: conv, ReLU(inplace),
/// ..., MaxPool2d(2, 2).
Value vram::zoo::buildVgg16(ModelBuilder &mb, Value x, const ModelConfig &c) {
  constexpr int64_t kMaxPool = 0;
  const int64_t features[] = {64,  64,       kMaxPool, 128,      128, kMaxPool,
                              256, 256,      256,      kMaxPool, 512, 512,
                              512, kMaxPool, 512,      512,      512, kMaxPool};
  int index = 0;
  auto next = [&] { return ("features." + Twine(index++)).str(); };
  for (int64_t channels : features) {
    if (channels == kMaxPool) {
      x = mb.maxPool(x, next(), 2, 2);
      continue;
    }
    x = mb.conv(x, next(), channels, 3, 1, 1, 1, /*bias=*/true);
    x = mb.relu(x, next());
  }

  x = mb.adaptiveAvgPool(x, "avgpool", 7, 7);
  x = mb.flatten(x, "flatten");
  x = mb.relu(mb.linear(x, "classifier.0", 4096), "classifier.1");
  x = mb.dropout(x, "classifier.2", 0.5);
  x = mb.relu(mb.linear(x, "classifier.3", 4096), "classifier.4");
  x = mb.dropout(x, "classifier.5", 0.5);
  return mb.linear(x, "classifier.6", c.numClasses);
}

/// A small CIFAR-style CNN (38,618 parameters with 10 classes) for tests:
///
///   conv1 = Conv2d(3, 16, 3, padding=1, bias=False); bn1 = BatchNorm2d(16)
///   conv2 = Conv2d(16, 32, 3, padding=1, bias=False); bn2 = BatchNorm2d(32)
///   pool = MaxPool2d(2); avgpool = AdaptiveAvgPool2d(4)
///   fc1 = Linear(512, 64); fc2 = Linear(64, num_classes)
///
///   x = pool(relu(bn1(conv1(x)))); x = pool(relu(bn2(conv2(x))))
///   x = flatten(avgpool(x), 1); x = fc2(relu(fc1(x)))
///
/// The adaptive pool keeps the parameter count independent of the image size.
Value vram::zoo::buildTinyCnn(ModelBuilder &mb, Value x, const ModelConfig &c) {
  x = mb.relu(mb.batchNorm(mb.conv(x, "conv1", 16, 3, 1, 1), "bn1"), "relu");
  x = mb.maxPool(x, "pool", 2, 2);
  x = mb.relu(mb.batchNorm(mb.conv(x, "conv2", 32, 3, 1, 1), "bn2"), "relu");
  x = mb.maxPool(x, "pool", 2, 2);
  x = mb.flatten(mb.adaptiveAvgPool(x, "avgpool", 4, 4), "flatten");
  x = mb.relu(mb.linear(x, "fc1", 64), "relu");
  return mb.linear(x, "fc2", c.numClasses);
}
