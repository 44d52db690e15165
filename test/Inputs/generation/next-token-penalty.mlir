// One choice of tokens with the penalty processor on [8, 1024] scores
// (test/Analysis/generation-processors.test).
module {
  func.func @forward(%l: tensor<8x1x1024xf32>) -> (tensor<8x1xi64>, tensor<8x1024xf32>, tensor<8x1024xf32>)
      attributes {nn.max_new_tokens = 1 : i64} {
    %s, %t, %w = nn.next_token %l {repetition_penalty = 1.200000e+00 : f64, input_length = 24 : i64} : tensor<8x1x1024xf32> -> (tensor<8x1024xf32>, tensor<8x1xi64>, tensor<8x1024xf32>)
    return %t, %s, %w : tensor<8x1xi64>, tensor<8x1024xf32>, tensor<8x1024xf32>
  }
}
