// One choice of tokens with the min-p processor on [8, 1024] scores
// (test/Analysis/generation-processors.test).
module {
  func.func @forward(%l: tensor<8x1x1024xf32>) -> (tensor<8x1xi64>, tensor<8x1024xf32>, tensor<8x1024xf32>, tensor<8x1024xf32>)
      attributes {nn.max_new_tokens = 1 : i64} {
    %s, %t, %w, %p = nn.next_token %l {sample, min_p = 1.000000e-01 : f64} : tensor<8x1x1024xf32> -> (tensor<8x1024xf32>, tensor<8x1xi64>, tensor<8x1024xf32>, tensor<8x1024xf32>)
    return %t, %s, %w, %p : tensor<8x1xi64>, tensor<8x1024xf32>, tensor<8x1024xf32>, tensor<8x1024xf32>
  }
}
