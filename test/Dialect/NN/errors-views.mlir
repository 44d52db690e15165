// Invalid nn.concat and view ops (reshape, flatten, transpose, permute, slice,
// expand). One invalid op per split; ops that infer their result type report
// the specific problem, then "failed to infer returned types".

// RUN: vram-opt %s -split-input-file -verify-diagnostics

// concat: no inputs
func.func @f() {
  // expected-error @+2 {{needs at least one input}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat {dim = 0 : i64} : () -> tensor<1xf32>
  return
}

// -----

// concat: dim out of range
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+2 {{dim 2 is out of range for rank 2}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {dim = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

// concat: negative dim out of range
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) {
  // expected-error @+2 {{dim -3 is out of range for rank 2}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {dim = -3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return
}

// -----

// concat: inputs differ outside dim
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+2 {{inputs differ in dimension 0: [2, 3] vs [4, 3]}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {dim = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

// concat: ranks differ
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3x1xf32>) {
  // expected-error @+2 {{inputs have different ranks}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3x1xf32>) -> tensor<4x3xf32>
  return
}

// -----

// concat: element types differ
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+2 {{inputs have different element types}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {dim = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<4x3xf32>
  return
}

// -----

// concat: wrong result size along dim
func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x5xf32>) {
  // expected-error @+2 {{'nn.concat' op inferred type(s) 'tensor<2x8xf32>' are incompatible with return type(s) of operation 'tensor<2x6xf32>'}}
  // expected-error @+1 {{'nn.concat' op failed to infer returned types}}
  %0 = nn.concat %a, %b {dim = -1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x6xf32>
  return
}

// -----

// concat: missing dim
func.func @f(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.concat' op requires attribute 'dim'}}
  %0 = nn.concat %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

// reshape: element count changes
func.func @f(%x: tensor<2x512x1x1xf32>) {
  // expected-error @+1 {{'nn.reshape' op cannot reshape 1024 elements into 512}}
  %0 = nn.reshape %x : tensor<2x512x1x1xf32> -> tensor<2x256xf32>
  return
}

// -----

// reshape: element type changes
func.func @f(%x: tensor<2x512xf32>) {
  // expected-error @+1 {{'nn.reshape' op cannot change the element type}}
  %0 = nn.reshape %x : tensor<2x512xf32> -> tensor<1024xf16>
  return
}

// -----

// flatten: start_dim out of range
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{invalid dims start_dim=4 end_dim=3 for rank 4}}
  // expected-error @+1 {{'nn.flatten' op failed to infer returned types}}
  %0 = nn.flatten %x {start_dim = 4 : i64, end_dim = 3 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// flatten: end_dim out of range
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{invalid dims start_dim=0 end_dim=4 for rank 4}}
  // expected-error @+1 {{'nn.flatten' op failed to infer returned types}}
  %0 = nn.flatten %x {start_dim = 0 : i64, end_dim = 4 : i64} : (tensor<2x128x8x32xf32>) -> tensor<65536xf32>
  return
}

// -----

// flatten: negative end_dim out of range
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{invalid dims start_dim=1 end_dim=-5 for rank 4}}
  // expected-error @+1 {{'nn.flatten' op failed to infer returned types}}
  %0 = nn.flatten %x {end_dim = -5 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x32768xf32>
  return
}

// -----

// flatten: start_dim after end_dim
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{invalid dims start_dim=2 end_dim=1 for rank 4}}
  // expected-error @+1 {{'nn.flatten' op failed to infer returned types}}
  %0 = nn.flatten %x {start_dim = 2 : i64, end_dim = 1 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// flatten: wrong result shape
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{'nn.flatten' op inferred type(s) 'tensor<2x32768xf32>' are incompatible with return type(s) of operation 'tensor<2x32768xf16>'}}
  // expected-error @+1 {{'nn.flatten' op failed to infer returned types}}
  %0 = nn.flatten %x : (tensor<2x128x8x32xf32>) -> tensor<2x32768xf16>
  return
}

// -----

// transpose: dim out of range
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{dims (1, 4) are out of range for rank 4}}
  // expected-error @+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x {dim0 = 1 : i64, dim1 = 4 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// transpose: negative dim out of range
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{dims (-5, 0) are out of range for rank 4}}
  // expected-error @+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x {dim0 = -5 : i64, dim1 = 0 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// transpose: missing dim1
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+1 {{'nn.transpose' op requires attribute 'dim1'}}
  %0 = nn.transpose %x {dim0 = 1 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// transpose: result not transposed
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{'nn.transpose' op inferred type(s) 'tensor<2x8x128x32xf32>' are incompatible with return type(s) of operation 'tensor<2x128x8x32xf32>'}}
  // expected-error @+1 {{'nn.transpose' op failed to infer returned types}}
  %0 = nn.transpose %x {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// permute: repeated dim
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{dims is not a permutation}}
  // expected-error @+1 {{'nn.permute' op failed to infer returned types}}
  %0 = nn.permute %x {dims = array<i64: 0, 1, 1, 3>} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// permute: dim and its negative alias
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{dims is not a permutation}}
  // expected-error @+1 {{'nn.permute' op failed to infer returned types}}
  %0 = nn.permute %x {dims = array<i64: 0, 1, 2, -2>} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// permute: dim out of range
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{dims is not a permutation}}
  // expected-error @+1 {{'nn.permute' op failed to infer returned types}}
  %0 = nn.permute %x {dims = array<i64: 0, 1, 2, 4>} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// permute: too few dims
func.func @f(%x: tensor<2x128x8x32xf32>) {
  // expected-error @+2 {{dims has 3 entries for rank 4}}
  // expected-error @+1 {{'nn.permute' op failed to infer returned types}}
  %0 = nn.permute %x {dims = array<i64: 1, 0, 2>} : (tensor<2x128x8x32xf32>) -> tensor<2x128x8x32xf32>
  return
}

// -----

// permute: wrong result shape
func.func @f(%x: tensor<2x196x768xf32>) {
  // expected-error @+2 {{'nn.permute' op inferred type(s) 'tensor<2x768x196xf32>' are incompatible with return type(s) of operation 'tensor<2x196x768xf32>'}}
  // expected-error @+1 {{'nn.permute' op failed to infer returned types}}
  %0 = nn.permute %x {dims = array<i64: 0, 2, 1>} : (tensor<2x196x768xf32>) -> tensor<2x196x768xf32>
  return
}

// -----

// slice: zero step
func.func @f(%x: tensor<2x197x768xf32>) {
  // expected-error @+2 {{step must be >= 1, got 0}}
  // expected-error @+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x {dim = 1 : i64, start = 0 : i64, end = 4 : i64, step = 0 : i64} : (tensor<2x197x768xf32>) -> tensor<2x4x768xf32>
  return
}

// -----

// slice: negative step
func.func @f(%x: tensor<2x197x768xf32>) {
  // expected-error @+2 {{step must be >= 1, got -1}}
  // expected-error @+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x {dim = 1 : i64, start = 4 : i64, end = 0 : i64, step = -1 : i64} : (tensor<2x197x768xf32>) -> tensor<2x4x768xf32>
  return
}

// -----

// slice: dim out of range
func.func @f(%x: tensor<2x197x768xf32>) {
  // expected-error @+2 {{dim 3 is out of range for rank 3}}
  // expected-error @+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x {dim = 3 : i64, start = 0 : i64, end = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<2x197x768xf32>
  return
}

// -----

// slice: negative dim out of range
func.func @f(%x: tensor<2x197x768xf32>) {
  // expected-error @+2 {{dim -4 is out of range for rank 3}}
  // expected-error @+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x {dim = -4 : i64, start = 0 : i64, end = 1 : i64} : (tensor<2x197x768xf32>) -> tensor<2x197x768xf32>
  return
}

// -----

// slice: wrong result shape
func.func @f(%x: tensor<2x197x768xf32>) {
  // expected-error @+2 {{'nn.slice' op inferred type(s) 'tensor<2x4x768xf32>' are incompatible with return type(s) of operation 'tensor<2x3x768xf32>'}}
  // expected-error @+1 {{'nn.slice' op failed to infer returned types}}
  %0 = nn.slice %x {dim = 1 : i64, start = 0 : i64, end = 10 : i64, step = 3 : i64} : (tensor<2x197x768xf32>) -> tensor<2x3x768xf32>
  return
}

// -----

// slice: missing end
func.func @f(%x: tensor<2x197x768xf32>) {
  // expected-error @+1 {{'nn.slice' op requires attribute 'end'}}
  %0 = nn.slice %x {dim = 1 : i64, start = 0 : i64} : (tensor<2x197x768xf32>) -> tensor<2x197x768xf32>
  return
}

// -----

// expand: dim not of size 1
func.func @f(%x: tensor<1x3x768xf32>) {
  // expected-error @+1 {{'nn.expand' op cannot expand dimension 1 of size 3 to 6}}
  %0 = nn.expand %x : tensor<1x3x768xf32> -> tensor<2x6x768xf32>
  return
}

// -----

// expand: rank decreases
func.func @f(%x: tensor<1x1x768xf32>) {
  // expected-error @+1 {{'nn.expand' op cannot expand rank 3 to rank 2}}
  %0 = nn.expand %x : tensor<1x1x768xf32> -> tensor<1x768xf32>
  return
}

// -----

// expand: element type changes
func.func @f(%x: tensor<1x768xf32>) {
  // expected-error @+1 {{'nn.expand' op cannot change the element type}}
  %0 = nn.expand %x : tensor<1x768xf32> -> tensor<2x768xbf16>
  return
}

// -----

// expand: trailing alignment (a size-2 dim is not expanded to 4)
func.func @f(%x: tensor<2x1xf32>) {
  // expected-error @+1 {{'nn.expand' op cannot expand dimension 0 of size 2 to 4}}
  %0 = nn.expand %x : tensor<2x1xf32> -> tensor<2x4x2xf32>
  return
}

// -----

// split: dim out of range
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.split' op dim 2 is out of range for rank 2}}
  %0:2 = nn.split %x {dim = 2 : i64, sizes = array<i64: 1, 1>} : (tensor<2x6xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>)
  return
}

// -----

// split: one size per result
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.split' op has 3 sizes for 2 results}}
  %0:2 = nn.split %x {dim = 1 : i64, sizes = array<i64: 2, 2, 2>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x4xf32>)
  return
}

// -----

// split: the pieces must cover the dimension
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.split' op pieces of 5 elements do not cover dim 1 of 6}}
  %0:2 = nn.split %x {dim = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>)
  return
}

// -----

// split: a result that is not its piece
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.split' op result of type 'tensor<2x3xf32>' is not a piece of 2 along dim 1 of 'tensor<2x6xf32>'}}
  %0:2 = nn.split %x {dim = 1 : i64, sizes = array<i64: 2, 4>} : (tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  return
}

// -----

// split: squeeze (unbind) takes pieces of one
func.func @f(%x: tensor<2x6xf32>) {
  // expected-error @+1 {{'nn.split' op piece sizes must be 1 with squeeze, got 2}}
  %0 = nn.split %x {dim = 0 : i64, sizes = array<i64: 2>, squeeze} : (tensor<2x6xf32>) -> tensor<6xf32>
  return
}
