// RUN: vram-opt %s -split-input-file -verify-diagnostics --vram-print-memory -o /dev/null

// Ops with regions (a loop, a checkpoint segment) are not analyzed yet: a
// located error, never a silently wrong number.
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{memory analysis does not support ops with regions}}
  builtin.module {
  }
  return %x : tensor<2x8xf32>
}

// -----

// The same error, at the op with regions, when its regions hold ops (which
// a walk reaches before the op itself).
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{memory analysis does not support ops with regions}}
  builtin.module {
    func.func private @inner(tensor<2x8xf32>)
  }
  return %x : tensor<2x8xf32>
}

// -----

// The sum of live storages can overflow even when each storage fits: three
// tensors of (2^60 - 1) x 4 bytes are alive at the second relu.
func.func @forward(%x: tensor<1152921504606846975xf32>) -> tensor<1152921504606846975xf32> {
  %y = nn.relu %x : tensor<1152921504606846975xf32>
  // expected-error @+1 {{live memory does not fit in 64 bits}}
  %z = nn.relu %y : tensor<1152921504606846975xf32>
  return %z : tensor<1152921504606846975xf32>
}
