// Liger-Kernel's ops: they round-trip with their defaults elided, and each
// invalid form gets one error (a split each).

// RUN: vram-opt --format=mlir %s -split-input-file -verify-diagnostics | FileCheck %s

// CHECK-LABEL: func.func @liger
// CHECK: nn.liger_rms_norm %{{.*}}, %{{.*}} {eps = 1.000000e-05 : f64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK: nn.liger_rms_norm %{{.*}}, %{{.*}} {partial_rows = 132 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
// CHECK: nn.liger_swiglu %{{.*}}, %{{.*}} : tensor<2x16x172xbf16>
// CHECK: nn.liger_rope %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {query_grad_in_place} :
func.func @liger(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>, %a: tensor<2x16x172xbf16>,
                 %b: tensor<2x16x172xbf16>, %q: tensor<2x4x16x16xf32>, %k: tensor<2x2x16x16xf32>,
                 %cos: tensor<1x16x16xf32>, %sin: tensor<1x16x16xf32>) {
  %0 = nn.liger_rms_norm %x, %g {eps = 1.0e-05 : f64, partial_rows = 1 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %1 = nn.liger_rms_norm %x, %g {eps = 1.0e-06 : f64, partial_rows = 132 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  %2 = nn.liger_swiglu %a, %b : tensor<2x16x172xbf16>
  %3:2 = nn.liger_rope %q, %k, %cos, %sin {query_grad_in_place} : (tensor<2x4x16x16xf32>, tensor<2x2x16x16xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x2x16x16xf32>)
  return
}

// -----

func.func @rms_norm_weight(%x: tensor<2x16x64xf32>, %g: tensor<32xf32>) {
  // expected-error @+2 {{weight must have the normalized shape [64], got [32]}}
  // expected-error @+1 {{'nn.liger_rms_norm' op failed to infer returned types}}
  %0 = nn.liger_rms_norm %x, %g : (tensor<2x16x64xf32>, tensor<32xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @rms_norm_partial_rows(%x: tensor<2x16x64xf32>, %g: tensor<64xf32>) {
  // expected-error @+2 {{partial_rows must be >= 1, got 0}}
  // expected-error @+1 {{'nn.liger_rms_norm' op failed to infer returned types}}
  %0 = nn.liger_rms_norm %x, %g {partial_rows = 0 : i64} : (tensor<2x16x64xf32>, tensor<64xf32>) -> tensor<2x16x64xf32>
  return
}

// -----

func.func @swiglu_types(%a: tensor<2x16x172xf32>, %b: tensor<2x16x172xbf16>) {
  // expected-error @+1 {{'nn.liger_swiglu' op failed to verify that all of {gate, up, output} have same type}}
  %0 = "nn.liger_swiglu"(%a, %b) : (tensor<2x16x172xf32>, tensor<2x16x172xbf16>) -> tensor<2x16x172xf32>
  return
}

// -----

func.func @rope_rank(%q: tensor<2x16x64xf32>, %k: tensor<2x2x16x16xf32>, %t: tensor<1x16x16xf32>) {
  // expected-error @+2 {{q and k must be [B, heads, T, D], got [2, 16, 64] and [2, 2, 16, 16]}}
  // expected-error @+1 {{'nn.liger_rope' op failed to infer returned types}}
  %0:2 = nn.liger_rope %q, %k, %t, %t : (tensor<2x16x64xf32>, tensor<2x2x16x16xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) -> (tensor<2x16x64xf32>, tensor<2x2x16x16xf32>)
  return
}

// -----

func.func @rope_heads(%q: tensor<2x4x16x16xf32>, %k: tensor<2x2x8x16xf32>, %t: tensor<1x16x16xf32>) {
  // expected-error @+2 {{q [2, 4, 16, 16] and k [2, 2, 8, 16] must agree but for their heads}}
  // expected-error @+1 {{'nn.liger_rope' op failed to infer returned types}}
  %0:2 = nn.liger_rope %q, %k, %t, %t : (tensor<2x4x16x16xf32>, tensor<2x2x8x16xf32>, tensor<1x16x16xf32>, tensor<1x16x16xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x2x8x16xf32>)
  return
}

// -----

func.func @rope_tables(%q: tensor<2x4x16x16xf32>, %k: tensor<2x2x16x16xf32>, %t: tensor<1x16x32xf32>) {
  // expected-error @+2 {{cos and sin must be [16, rotary dim <= 16] or [1 or 2, ...], got [1, 16, 32]}}
  // expected-error @+1 {{'nn.liger_rope' op failed to infer returned types}}
  %0:2 = nn.liger_rope %q, %k, %t, %t : (tensor<2x4x16x16xf32>, tensor<2x2x16x16xf32>, tensor<1x16x32xf32>, tensor<1x16x32xf32>) -> (tensor<2x4x16x16xf32>, tensor<2x2x16x16xf32>)
  return
}
