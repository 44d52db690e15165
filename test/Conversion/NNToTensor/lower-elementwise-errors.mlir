// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-build-step="mode=train optimizer=sgd loss=mse" --vram-lower-to-tensor

// A constant whose value is not dense elements is an error at the op.
func.func @forward() -> tensor<2x5xf32> {
  %x = nn.param "x" : tensor<2x5xf32>
  // expected-error @+1 {{nn.constant: the lowering needs a dense value}}
  %c = nn.constant dense_resource<blob> : tensor<2x5xf32>
  %y = nn.mul %x, %c : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return %y : tensor<2x5xf32>
}
{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F0000803F"
    }
  }
#-}

// -----

// h *= 2 where another op's backward keeps h (w * h keeps it for w's
// gradient): the in-place form would overwrite it (PyTorch's backward
// fails: "a variable needed for gradient computation has been modified by
// an inplace operation"). Its own backward keeps a clone of h when the
// other operand needs a gradient (test/Execution/ops/mul-inplace-grad.mlir).
func.func @forward() -> tensor<2x5xf32> {
  %a = nn.param "a" : tensor<2x5xf32>
  %w = nn.param "w" : tensor<2x5xf32>
  %c = nn.constant dense<1.000000e+00> : tensor<f32>
  %two = nn.constant dense<2.000000e+00> : tensor<f32>
  %h = nn.add %a, %c : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
  %z = nn.mul %w, %h : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  // expected-error @+1 {{nn.mul {inplace}: the lowering cannot overwrite a tensor that the backward of nn.mul keeps}}
  %y = nn.mul %h, %two {inplace} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>
  %s = nn.add %y, %z : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}
