//===- ConvPool.cpp - Conv and pooling converters -------------------------===//

#include "ConstTensor.h"
#include "ConverterTable.h"
#include "Importer.h"

#include <climits>
#include <cmath>

using namespace mlir;
using namespace vram::onnx_import;
namespace nn = vram::nn;
using llvm::SmallVector;

static SmallVector<int64_t> ints2(std::optional<std::vector<int64_t>> v,
                                  int64_t dflt) {
  if (!v || v->empty())
    return {dflt, dflt};
  return SmallVector<int64_t>(v->begin(), v->end());
}

/// Symmetric 2-D padding from ONNX pads [top, left, bottom, right] or
/// auto_pad; fails for asymmetric padding.
static LogicalResult padding2d(const OpBinder &op, ArrayRef<int64_t> inHW,
                               ArrayRef<int64_t> kernel,
                               ArrayRef<int64_t> strides, ArrayRef<int64_t> dil,
                               SmallVectorImpl<int64_t> &pad,
                               std::string &err) {
  std::string autoPad = op.stringAttr("auto_pad", "NOTSET");
  pad.assign({0, 0});
  if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (int k = 0; k < 2; ++k) {
      int64_t out = (inHW[k] + strides[k] - 1) / strides[k];
      int64_t total = std::max<int64_t>(
          0, (out - 1) * strides[k] + (kernel[k] - 1) * dil[k] + 1 - inHW[k]);
      if (total % 2) {
        err = "auto_pad " + autoPad + " needs asymmetric padding";
        return failure();
      }
      pad[k] = total / 2;
    }
    return success();
  }
  if (autoPad == "VALID")
    return success();
  if (autoPad != "NOTSET" && !autoPad.empty()) {
    err = "unknown auto_pad '" + autoPad + "'";
    return failure();
  }
  auto pads = op.intsAttr("pads");
  if (!pads || pads->empty())
    return success();
  if (pads->size() != 4) {
    err = "expects 4 pads for a 2-D op";
    return failure();
  }
  if ((*pads)[0] != (*pads)[2] || (*pads)[1] != (*pads)[3]) {
    err = "asymmetric padding is not supported";
    return failure();
  }
  pad.assign({(*pads)[0], (*pads)[1]});
  return success();
}

/// Conv over [N, C, L] (torch's Conv1d): as ATen runs it, a 2-D
/// convolution of the input and weight viewed with a unit height, the
/// output viewed back (the views share storage: the bytes kept are the
/// same).
static LogicalResult convertConv1d(OpBinder &op, Value x, Value w, Value bias) {
  OpBuilder &b = op.builder();
  ArrayRef<int64_t> xs = cast<RankedTensorType>(x.getType()).getShape(),
                    ws = cast<RankedTensorType>(w.getType()).getShape();
  SmallVector<int64_t> strides = ints2(op.intsAttr("strides"), 1);
  SmallVector<int64_t> dil = ints2(op.intsAttr("dilations"), 1);
  std::string autoPad = op.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && autoPad != "VALID" && !autoPad.empty())
    return op.error() << "auto_pad " << autoPad
                      << " is not supported for a 1-D Conv";
  int64_t pad = 0;
  if (auto pads = op.intsAttr("pads"); pads && !pads->empty()) {
    if (pads->size() != 2)
      return op.error() << "expects 2 pads for a 1-D Conv";
    if ((*pads)[0] != (*pads)[1])
      return op.error() << "asymmetric padding is not supported";
    pad = (*pads)[0];
  }
  // ints2 doubles a missing attribute; a 1-D op lists one value.
  if (op.intsAttr("strides") && strides.size() != 1)
    return op.error() << "expects 1 stride for a 1-D Conv";
  if (op.intsAttr("dilations") && dil.size() != 1)
    return op.error() << "expects 1 dilation for a 1-D Conv";
  auto x4 = op.im.reshapeTo(x, {xs[0], xs[1], 1, xs[2]}, op.loc);
  auto w4 = op.im.reshapeTo(w, {ws[0], ws[1], 1, ws[2]}, op.loc);
  if (failed(x4) || failed(w4))
    return failure();
  auto y = op.make<nn::Conv2dOp>(
      *x4, *w4, bias, b.getDenseI64ArrayAttr({1, strides.back()}),
      b.getDenseI64ArrayAttr({0, pad}), b.getDenseI64ArrayAttr({1, dil.back()}),
      b.getI64IntegerAttr(op.intAttr("group", 1)));
  if (failed(y))
    return failure();
  ArrayRef<int64_t> ys = cast<RankedTensorType>(y->getType()).getShape();
  auto y3 = op.im.reshapeTo(*y, {ys[0], ys[1], ys[3]}, op.loc);
  if (failed(y3))
    return failure();
  op.setResult(0, *y3);
  return success();
}

static LogicalResult convertConv(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = op.tensor(0);
  auto w = op.tensor(1);
  if (failed(x) || failed(w))
    return failure();
  auto bias = op.optionalTensor(2);
  if (failed(bias))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  auto wt = cast<RankedTensorType>(w->getType());
  if (xt.getRank() == 3 && wt.getRank() == 3 && isFloatTensor(*x) &&
      isFloatTensor(*w))
    return convertConv1d(op, *x, *w, *bias);
  if (xt.getRank() != 4 || wt.getRank() != 4)
    return op.error() << "only 1-D and 2-D convolution (NCL or NCHW input) "
                         "is supported, got input "
                      << xt << " and weight " << wt;
  if (!isFloatTensor(*x) || !isFloatTensor(*w))
    return op.error() << "expects floating-point input and weight";
  SmallVector<int64_t> strides = ints2(op.intsAttr("strides"), 1);
  SmallVector<int64_t> dil = ints2(op.intsAttr("dilations"), 1);
  SmallVector<int64_t> kernel{wt.getDimSize(2), wt.getDimSize(3)};
  if (strides.size() != 2 || dil.size() != 2)
    return op.error() << "expects 2 strides and dilations";
  SmallVector<int64_t> pad;
  std::string err;
  if (failed(padding2d(op, xt.getShape().drop_front(2), kernel, strides, dil,
                       pad, err)))
    return op.error() << err;
  return op.makeResult<nn::Conv2dOp>(
      *x, *w, *bias, b.getDenseI64ArrayAttr(strides),
      b.getDenseI64ArrayAttr(pad), b.getDenseI64ArrayAttr(dil),
      b.getI64IntegerAttr(op.intAttr("group", 1)));
}

/// ConvTranspose: weight [Cin, Cout / group, kh, kw], symmetric pads,
/// output_padding; an output_shape must be the one the other attributes
/// give (torch.onnx writes pads and output_padding).
static LogicalResult convertConvTranspose(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = op.tensor(0);
  auto w = op.tensor(1);
  if (failed(x) || failed(w))
    return failure();
  auto bias = op.optionalTensor(2);
  if (failed(bias))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  auto wt = cast<RankedTensorType>(w->getType());
  if (xt.getRank() != 4 || wt.getRank() != 4)
    return op.error() << "only 2-D transposed convolution (NCHW input, 4-D "
                         "weight) is supported, got input "
                      << xt << " and weight " << wt;
  if (!isFloatTensor(*x) || !isFloatTensor(*w))
    return op.error() << "expects floating-point input and weight";
  std::string autoPad = op.stringAttr("auto_pad", "NOTSET");
  if (autoPad != "NOTSET" && !autoPad.empty())
    return op.error() << "auto_pad " << autoPad
                      << " is not supported for ConvTranspose";
  SmallVector<int64_t> strides = ints2(op.intsAttr("strides"), 1);
  SmallVector<int64_t> dil = ints2(op.intsAttr("dilations"), 1);
  SmallVector<int64_t> outPad = ints2(op.intsAttr("output_padding"), 0);
  if (strides.size() != 2 || dil.size() != 2 || outPad.size() != 2)
    return op.error() << "expects 2 strides, dilations and output_padding";
  // auto_pad is NOTSET (above): padding2d reads the symmetric pads.
  SmallVector<int64_t> pad;
  std::string err;
  SmallVector<int64_t> kernel{wt.getDimSize(2), wt.getDimSize(3)};
  if (failed(padding2d(op, xt.getShape().drop_front(2), kernel, strides, dil,
                       pad, err)))
    return op.error() << err;
  auto y = op.make<nn::ConvTranspose2dOp>(
      *x, *w, *bias, b.getDenseI64ArrayAttr(strides),
      b.getDenseI64ArrayAttr(pad), b.getDenseI64ArrayAttr(outPad),
      b.getDenseI64ArrayAttr(dil), b.getI64IntegerAttr(op.intAttr("group", 1)));
  if (failed(y))
    return failure();
  if (auto shape = op.intsAttr("output_shape"); shape && !shape->empty()) {
    ArrayRef<int64_t> got = cast<RankedTensorType>(y->getType()).getShape();
    if (ArrayRef<int64_t>(*shape) != got.take_back(shape->size()))
      return op.error() << "output_shape differs from the output the pads and "
                           "output_padding give: "
                        << y->getType();
  }
  op.setResult(0, *y);
  return success();
}

/// Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) in the forms
/// torch.onnx writes F.interpolate(mode='nearest') (nearest mode with
/// asymmetric coordinates and floor rounding) and F.interpolate(mode=
/// 'bilinear') (linear mode with align_corners, or pytorch_half_pixel /
/// half_pixel coordinates for align_corners=False), N and C kept, constant
/// scales (output floor(in * scale); a bilinear resize keeps them for its
/// source positions) or sizes.
static LogicalResult convertResize(OpBinder &op) {
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  if (xt.getRank() != 4 || !isFloatTensor(*x))
    return op.error() << "only a floating-point NCHW input is supported, got "
                      << xt;
  std::string mode = op.stringAttr("mode", "nearest");
  std::string coords =
      op.stringAttr("coordinate_transformation_mode",
                    op.opset() < 11 ? "asymmetric" : "half_pixel");
  std::string rounding = op.stringAttr("nearest_mode", "round_prefer_floor");
  if (op.opset() < 11)
    rounding = "floor";
  bool linear = mode == "linear" &&
                (coords == "align_corners" || coords == "pytorch_half_pixel" ||
                 coords == "half_pixel");
  bool nearest =
      mode == "nearest" && coords == "asymmetric" && rounding == "floor";
  if (!linear && !nearest)
    return op.error()
           << "only resizing as F.interpolate exports it is "
              "supported: mode nearest with "
              "coordinate_transformation_mode asymmetric and "
              "nearest_mode floor, or mode linear with align_corners, "
              "pytorch_half_pixel or half_pixel; got mode "
           << mode << ", " << coords << ", " << rounding;
  if (linear && op.intAttr("antialias", 0) != 0)
    return op.error() << "antialiased linear resizing is not modelled";
  int scalesInput = op.opset() < 11 ? 1 : 2;
  SmallVector<int64_t> out(xt.getShape());
  SmallVector<double> spatialScales;
  if (const ConstTensor *sizes =
          op.opset() < 11 ? nullptr : op.constOnlyInput(3);
      sizes && sizes->numElements()) {
    std::vector<int64_t> v = sizes->toInts();
    if (v.size() != 4)
      return op.error() << "expects 4 sizes";
    for (int64_t d : v)
      if (d < 1 || d > INT32_MAX)
        return op.error() << "size " << d << " is not a valid dimension";
    out.assign(v.begin(), v.end());
  } else if (const ConstTensor *scales = op.constOnlyInput(scalesInput);
             scales && scales->numElements()) {
    if (scales->numElements() != 4)
      return op.error() << "expects 4 scales";
    for (unsigned d = 0; d < 4; ++d) {
      double scaled = std::floor(xt.getDimSize(d) * scales->getF(d));
      if (!(scaled >= 1 && scaled <= double(INT32_MAX)))
        return op.error() << "scale " << scales->getF(d) << " of dimension "
                          << d << " gives no valid size";
      out[d] = static_cast<int64_t>(scaled);
    }
    spatialScales = {scales->getF(2), scales->getF(3)};
  } else {
    return op.error() << "needs constant scales or sizes";
  }
  if (out[0] != xt.getDimSize(0) || out[1] != xt.getDimSize(1))
    return op.error() << "resizes only the spatial dimensions, got "
                      << xt.getShape()[0] << "x" << xt.getShape()[1] << " -> "
                      << out[0] << "x" << out[1];
  auto outType = RankedTensorType::get(out, xt.getElementType());
  if (linear) {
    OpBuilder &b = op.builder();
    op.setResult(0, nn::UpsampleBilinear2dOp::create(
                        b, op.loc, outType, *x, coords == "align_corners",
                        spatialScales.empty()
                            ? DenseF64ArrayAttr()
                            : b.getDenseF64ArrayAttr(spatialScales)));
    return success();
  }
  op.setResult(
      0, nn::UpsampleNearest2dOp::create(op.builder(), op.loc, outType, *x));
  return success();
}

/// The NCHW float input of a 2-D pooling op.
static FailureOr<Value> poolInput(OpBinder &op) {
  auto x = op.tensor(0);
  if (failed(x))
    return failure();
  auto xt = cast<RankedTensorType>(x->getType());
  if (xt.getRank() != 4 || !isFloatTensor(*x))
    return op.error() << "only 2-D pooling of a floating-point NCHW tensor is "
                         "supported, got "
                      << xt;
  return x;
}

/// Kernel, strides, dilations and padding of MaxPool/AveragePool.
struct PoolWindow {
  SmallVector<int64_t> kernel, strides, dil, pad;
  bool ceil = false;
};

static FailureOr<PoolWindow> poolWindow(OpBinder &op, Value x) {
  PoolWindow w;
  auto k = op.intsAttr("kernel_shape");
  if (!k || k->size() != 2)
    return op.error() << "expects a 2-D kernel_shape";
  w.kernel.assign(k->begin(), k->end());
  w.strides = ints2(op.intsAttr("strides"), 1);
  w.dil = ints2(op.intsAttr("dilations"), 1);
  if (w.strides.size() != 2 || w.dil.size() != 2)
    return op.error() << "expects 2 strides and dilations";
  std::string err;
  auto xt = cast<RankedTensorType>(x.getType());
  if (failed(padding2d(op, xt.getShape().drop_front(2), w.kernel, w.strides,
                       w.dil, w.pad, err)))
    return op.error() << err;
  w.ceil = op.intAttr("ceil_mode", 0);
  return w;
}

static LogicalResult convertMaxPool(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = poolInput(op);
  if (failed(x))
    return failure();
  auto w = poolWindow(op, *x);
  if (failed(w))
    return failure();
  if (op.outputUsed(1))
    return op.error() << "the Indices output is not supported";
  return op.makeResult<nn::MaxPool2dOp>(
      *x, b.getDenseI64ArrayAttr(w->kernel), b.getDenseI64ArrayAttr(w->strides),
      b.getDenseI64ArrayAttr(w->pad), b.getDenseI64ArrayAttr(w->dil),
      w->ceil ? b.getUnitAttr() : UnitAttr());
}

static LogicalResult convertAveragePool(OpBinder &op) {
  OpBuilder &b = op.builder();
  auto x = poolInput(op);
  if (failed(x))
    return failure();
  auto w = poolWindow(op, *x);
  if (failed(w))
    return failure();
  if (w->dil != SmallVector<int64_t>{1, 1})
    return op.error() << "dilated average pooling is not supported";
  bool countPad = op.intAttr("count_include_pad", 0);
  return op.makeResult<nn::AvgPool2dOp>(
      *x, b.getDenseI64ArrayAttr(w->kernel), b.getDenseI64ArrayAttr(w->strides),
      b.getDenseI64ArrayAttr(w->pad), w->ceil ? b.getUnitAttr() : UnitAttr(),
      b.getBoolAttr(countPad));
}

void vram::onnx_import::registerConvPoolConverters(ConverterTable &table) {
  table.onOp("Conv", 1, convertConv);
  table.onOp("ConvTranspose", 1, convertConvTranspose);
  table.onOp("Resize", 10, convertResize);
  table.onOp("MaxPool", 1, convertMaxPool);
  table.onOp("AveragePool", 1, convertAveragePool);
  table.onOp("GlobalAveragePool", 1, [](OpBinder &op) -> LogicalResult {
    auto x = poolInput(op);
    if (failed(x))
      return failure();
    return op.makeResult<nn::AdaptiveAvgPool2dOp>(*x, ArrayRef<int64_t>{1, 1});
  });
}
