// RUN: vram-opt %s -split-input-file -verify-diagnostics

func.func @copy_of_a_value(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.ema_copy' op copies an nn.param or nn.buffer}}
  %e = nn.ema_copy %x : tensor<4xf32>
  return
}

// -----

func.func @missing_copy() {
  %w = nn.param "w" : tensor<4xf32>
  // expected-error @+1 {{'nn.ema_update' op needs one averaged copy per parameter, got 0 for 1}}
  nn.ema_update params(%w) averaged() : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @wrong_type() {
  %w = nn.param "w" : tensor<4xf32>
  %v = nn.param "v" : tensor<2xf32>
  %e = nn.ema_copy %v : tensor<2xf32>
  // expected-error @+1 {{'nn.ema_update' op averaged copy 'tensor<2xf32>' does not match its parameter 'tensor<4xf32>'}}
  nn.ema_update params(%w) averaged(%e) : (tensor<4xf32>, tensor<2xf32>) -> ()
  return
}
