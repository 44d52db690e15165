// Invalid mixture-of-experts ops, one per split: each reports the specific
// problem, then "failed to infer returned types".
// RUN: vram-opt %s -split-input-file -verify-diagnostics

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{k (4) must be in [1, 3]}}
  // expected-error @+1 {{'nn.topk' op failed to infer returned types}}
  %v, %i = nn.topk %x {k = 4 : i64} : (tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<4x4xi64>)
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'nn.topk' op failed to infer returned types}}
  %v, %i = nn.topk %x {k = 1 : i64, dim = 2 : i64} : (tensor<4x3xf32>) -> (tensor<4x1xf32>, tensor<4x1xi64>)
  return
}

// -----

func.func @f(%x: tensor<4x3xf32>) {
  // expected-error @+2 {{dim -1 is listed twice}}
  // expected-error @+1 {{'nn.sum' op failed to infer returned types}}
  %s = nn.sum %x {dims = array<i64: 1, -1>} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @f(%i: tensor<8xi64>) {
  // expected-error @+2 {{expects the router's [tokens, k] int64 expert indices, got 'tensor<8xi64>'}}
  // expected-error @+1 {{'nn.moe_dispatch' op failed to infer returned types}}
  %a:7 = nn.moe_dispatch %i {num_experts = 3 : i64}
      : tensor<8xi64> -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi32>, tensor<3xi32>, tensor<3xi32>, tensor<8xi64>)
  return
}

// -----

func.func @f(%i: tensor<4x2xi64>) {
  // expected-error @+2 {{num_experts must be >= 1, got 0}}
  // expected-error @+1 {{'nn.moe_dispatch' op failed to infer returned types}}
  %a:7 = nn.moe_dispatch %i {num_experts = 0 : i64}
      : tensor<4x2xi64> -> (tensor<8xi64>, tensor<8xi64>, tensor<8xi64>, tensor<8xi32>, tensor<0xi32>, tensor<0xi32>, tensor<8xi64>)
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>, %w: tensor<12x8xf32>, %o: tensor<3xi32>) {
  // expected-error @+2 {{expects a 3-D weight [groups, out, in], got 'tensor<12x8xf32>'}}
  // expected-error @+1 {{'nn.grouped_mm' op failed to infer returned types}}
  %y = nn.grouped_mm %x, %w, %o : (tensor<8x8xf32>, tensor<12x8xf32>, tensor<3xi32>) -> tensor<8x12xf32>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>, %w: tensor<3x12x6xf32>, %o: tensor<3xi32>) {
  // expected-error @+2 {{input features (8) do not match the weight's (6)}}
  // expected-error @+1 {{'nn.grouped_mm' op failed to infer returned types}}
  %y = nn.grouped_mm %x, %w, %o : (tensor<8x8xf32>, tensor<3x12x6xf32>, tensor<3xi32>) -> tensor<8x12xf32>
  return
}

// -----

func.func @f(%x: tensor<8x8xf32>, %w: tensor<3x12x8xf32>, %o: tensor<2xi32>) {
  // expected-error @+2 {{expects int32 offsets, one per group (3), got 'tensor<2xi32>'}}
  // expected-error @+1 {{'nn.grouped_mm' op failed to infer returned types}}
  %y = nn.grouped_mm %x, %w, %o : (tensor<8x8xf32>, tensor<3x12x8xf32>, tensor<2xi32>) -> tensor<8x12xf32>
  return
}
