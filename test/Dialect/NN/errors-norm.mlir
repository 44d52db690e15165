// Invalid nn.batch_norm, nn.layer_norm, nn.rms_norm and nn.group_norm: one
// invalid op per split. Ops that infer their result type report the specific
// problem, then "failed to infer returned types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// batch_norm: input of rank 1
func.func @f(%x: tensor<64xf32>) {
  // expected-error @+2 {{expects an input of rank >= 2 (N, C, ...)}}
  // expected-error @+1 {{'nn.batch_norm' op failed to infer returned types}}
  %0 = nn.batch_norm %x : (tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

// batch_norm: weight of the wrong size
func.func @f(%x: tensor<2x64x8x8xf32>, %g: tensor<32xf32>, %b: tensor<64xf32>) {
  // expected-error @+2 {{weight must be [64], got [32]}}
  // expected-error @+1 {{'nn.batch_norm' op failed to infer returned types}}
  %0 = nn.batch_norm %x weight %g bias %b : (tensor<2x64x8x8xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// batch_norm: bias of the wrong element type
func.func @f(%x: tensor<2x64x8x8xf32>, %g: tensor<64xf32>, %b: tensor<64xf16>) {
  // expected-error @+2 {{bias element type 'f16' does not match input element type 'f32'}}
  // expected-error @+1 {{'nn.batch_norm' op failed to infer returned types}}
  %0 = nn.batch_norm %x weight %g bias %b : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<64xf16>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// batch_norm: running_var of rank 2
func.func @f(%x: tensor<2x64x8x8xf32>, %m: tensor<64xf32>, %v: tensor<1x64xf32>) {
  // expected-error @+2 {{running_var must be [64], got [1, 64]}}
  // expected-error @+1 {{'nn.batch_norm' op failed to infer returned types}}
  %0 = nn.batch_norm %x stats %m, %v : (tensor<2x64x8x8xf32>, tensor<64xf32>, tensor<1x64xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// batch_norm: running_mean of the wrong size
func.func @f(%x: tensor<2x64x8x8xf32>, %m: tensor<8xf32>, %v: tensor<64xf32>) {
  // expected-error @+2 {{running_mean must be [64], got [8]}}
  // expected-error @+1 {{'nn.batch_norm' op failed to infer returned types}}
  %0 = nn.batch_norm %x stats %m, %v : (tensor<2x64x8x8xf32>, tensor<8xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// batch_norm: weight without bias
func.func @f(%x: tensor<2x64x8x8xf32>, %g: tensor<64xf32>) {
  // expected-error @+1 {{'nn.batch_norm' op needs both weight and bias, or neither}}
  %0 = nn.batch_norm %x weight %g : (tensor<2x64x8x8xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// batch_norm: running_mean without running_var (generic form)
func.func @f(%x: tensor<2x64x8x8xf32>, %m: tensor<64xf32>) {
  // expected-error @+1 {{'nn.batch_norm' op needs both running_mean and running_var, or neither}}
  %0 = "nn.batch_norm"(%x, %m) <{operandSegmentSizes = array<i32: 1, 0, 0, 1, 0>}> : (tensor<2x64x8x8xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// batch_norm: zero eps
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+1 {{'nn.batch_norm' op eps must be positive}}
  %0 = nn.batch_norm %x {eps = 0.0 : f64} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// batch_norm: wrong result type
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{'nn.batch_norm' op inferred type(s) 'tensor<2x64x8x8xf32>' are incompatible with return type(s) of operation 'tensor<2x64x8x8xf16>'}}
  // expected-error @+1 {{'nn.batch_norm' op failed to infer returned types}}
  %0 = nn.batch_norm %x : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf16>
  return
}

// -----

// layer_norm: normalized_rank larger than the input rank
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{normalized_rank must be in [1, 2], got 3}}
  // expected-error @+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = nn.layer_norm %x {normalized_rank = 3 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// layer_norm: normalized_rank 0
func.func @f(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{normalized_rank must be in [1, 2], got 0}}
  // expected-error @+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = nn.layer_norm %x {normalized_rank = 0 : i64} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

// layer_norm: weight not of the normalized shape
func.func @f(%x: tensor<2x128x256xf32>, %g: tensor<128xf32>) {
  // expected-error @+2 {{weight must have the normalized shape [256], got [128]}}
  // expected-error @+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = nn.layer_norm %x weight %g : (tensor<2x128x256xf32>, tensor<128xf32>) -> tensor<2x128x256xf32>
  return
}

// -----

// layer_norm: weight of rank 1 for normalized_rank 2
func.func @f(%x: tensor<2x128x256xf32>, %g: tensor<256xf32>) {
  // expected-error @+2 {{weight must have the normalized shape [128, 256], got [256]}}
  // expected-error @+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = nn.layer_norm %x weight %g {normalized_rank = 2 : i64} : (tensor<2x128x256xf32>, tensor<256xf32>) -> tensor<2x128x256xf32>
  return
}

// -----

// layer_norm: bias of the wrong element type
func.func @f(%x: tensor<2x128x256xf32>, %g: tensor<256xf32>, %b: tensor<256xbf16>) {
  // expected-error @+2 {{bias element type 'bf16' does not match input element type 'f32'}}
  // expected-error @+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = nn.layer_norm %x weight %g bias %b : (tensor<2x128x256xf32>, tensor<256xf32>, tensor<256xbf16>) -> tensor<2x128x256xf32>
  return
}

// -----

// layer_norm: wrong result type
func.func @f(%x: tensor<2x128x256xf32>) {
  // expected-error @+2 {{'nn.layer_norm' op inferred type(s) 'tensor<2x128x256xf32>' are incompatible with return type(s) of operation 'tensor<2x128xf32>'}}
  // expected-error @+1 {{'nn.layer_norm' op failed to infer returned types}}
  %0 = nn.layer_norm %x : (tensor<2x128x256xf32>) -> tensor<2x128xf32>
  return
}

// -----

// rms_norm: weight not of the normalized shape
func.func @f(%x: tensor<1x16x4096xf32>, %g: tensor<16xf32>) {
  // expected-error @+2 {{weight must have the normalized shape [4096], got [16]}}
  // expected-error @+1 {{'nn.rms_norm' op failed to infer returned types}}
  %0 = nn.rms_norm %x weight %g : (tensor<1x16x4096xf32>, tensor<16xf32>) -> tensor<1x16x4096xf32>
  return
}

// -----

// rms_norm: weight of the wrong element type
func.func @f(%x: tensor<1x16x4096xbf16>, %g: tensor<4096xf32>) {
  // expected-error @+2 {{weight element type 'f32' does not match input element type 'bf16'}}
  // expected-error @+1 {{'nn.rms_norm' op failed to infer returned types}}
  %0 = nn.rms_norm %x weight %g : (tensor<1x16x4096xbf16>, tensor<4096xf32>) -> tensor<1x16x4096xbf16>
  return
}

// -----

// rms_norm: negative normalized_rank
func.func @f(%x: tensor<1x16x4096xf32>) {
  // expected-error @+2 {{normalized_rank must be in [1, 3], got -1}}
  // expected-error @+1 {{'nn.rms_norm' op failed to infer returned types}}
  %0 = nn.rms_norm %x {normalized_rank = -1 : i64} : (tensor<1x16x4096xf32>) -> tensor<1x16x4096xf32>
  return
}

// -----

// rms_norm: wrong result type
func.func @f(%x: tensor<1x16x4096xf32>) {
  // expected-error @+2 {{'nn.rms_norm' op inferred type(s) 'tensor<1x16x4096xf32>' are incompatible with return type(s) of operation 'tensor<1x16x4096xf16>'}}
  // expected-error @+1 {{'nn.rms_norm' op failed to infer returned types}}
  %0 = nn.rms_norm %x : (tensor<1x16x4096xf32>) -> tensor<1x16x4096xf16>
  return
}

// -----

// group_norm: num_groups does not divide the channels
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{num_groups (5) must divide channels (64)}}
  // expected-error @+1 {{'nn.group_norm' op failed to infer returned types}}
  %0 = nn.group_norm %x {num_groups = 5 : i64} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// group_norm: num_groups 0
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{num_groups (0) must divide channels (64)}}
  // expected-error @+1 {{'nn.group_norm' op failed to infer returned types}}
  %0 = nn.group_norm %x {num_groups = 0 : i64} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// group_norm: missing num_groups
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+1 {{'nn.group_norm' op requires attribute 'num_groups'}}
  %0 = nn.group_norm %x : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// group_norm: input of rank 1
func.func @f(%x: tensor<64xf32>) {
  // expected-error @+2 {{expects an input of rank >= 2 (N, C, ...)}}
  // expected-error @+1 {{'nn.group_norm' op failed to infer returned types}}
  %0 = nn.group_norm %x {num_groups = 2 : i64} : (tensor<64xf32>) -> tensor<64xf32>
  return
}

// -----

// group_norm: weight of the wrong size
func.func @f(%x: tensor<2x64x8x8xf32>, %g: tensor<32xf32>, %b: tensor<64xf32>) {
  // expected-error @+2 {{weight must be [64], got [32]}}
  // expected-error @+1 {{'nn.group_norm' op failed to infer returned types}}
  %0 = nn.group_norm %x weight %g bias %b {num_groups = 32 : i64} : (tensor<2x64x8x8xf32>, tensor<32xf32>, tensor<64xf32>) -> tensor<2x64x8x8xf32>
  return
}

// -----

// group_norm {instance}: one group per channel
func.func @f(%x: tensor<2x64x8x8xf32>) {
  // expected-error @+2 {{an instance norm has one group per channel: num_groups (32) must be 64}}
  // expected-error @+1 {{'nn.group_norm' op failed to infer returned types}}
  %0 = nn.group_norm %x {num_groups = 32 : i64, instance} : (tensor<2x64x8x8xf32>) -> tensor<2x64x8x8xf32>
  return
}
