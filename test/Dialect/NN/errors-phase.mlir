// RUN: vram-opt %s -split-input-file -verify-diagnostics

// `nn.phase` marks a forward op that activation checkpointing recomputes,
// or a view made in backward.
func.func @f(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %y = nn.relu %x {nn.phase = #nn<phase recompute>} : tensor<2x8xf32>
  %v = nn.slice %y {dim = 0 : i64, start = 0 : i64, end = 1 : i64, nn.phase = #nn<phase backward>} : (tensor<2x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @f(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.phase' must be #nn<phase recompute>, or #nn<phase backward> or #nn<phase optimizer> on a view or a cast, got #nn<phase backward>}}
  %y = nn.relu %x {nn.phase = #nn<phase backward>} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @f(%a: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.phase' must be absent on an op with a phase of its own, got #nn<phase recompute>}}
  %s = nn.accumulate_grad %a, %g {nn.phase = #nn<phase recompute>} : tensor<4xf32>, tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

func.func @f(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.float32' must be a unit attribute on an op with results}}
  %y = nn.relu %x {nn.float32 = 1 : i64} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @f(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.promote' must be a unit attribute on an op with results}}
  %y = nn.relu %x {nn.promote = 1 : i64} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

func.func @f(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.functional' must be a unit attribute on an nn.linear}}
  %y = nn.relu %x {nn.functional} : tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
