// A GPT-style transformer block with every lowered transformer op: token
// and position embeddings (an nn.constant arange), pre-LN causal
// self-attention written out (qkv linear on [B, T, C] without bias, slices, heads split by
// reshape + transpose, q k^T, a 0-d scale, masked_fill of the upper
// triangle, softmax, @ v, heads merged by transpose + contiguous +
// reshape), projection, dropout p = 0, residual, pre-LN MLP with exact GELU,
// residual, final layer norm, lm head without bias; the loss is
// cross-entropy on the flattened [B*T, V] logits (nn.sequence_logits).
// generate_transformer.py builds the same model in PyTorch (same names).
func.func @forward(%ids: tensor<2x5xi64>) -> tensor<2x5x13xf32> attributes {nn.sequence_logits} {
  %wte = nn.param "tok.weight" : tensor<13x12xf32>
  %e = nn.embedding %wte, %ids : (tensor<13x12xf32>, tensor<2x5xi64>) -> tensor<2x5x12xf32>
  %wpe = nn.param "pos.weight" : tensor<5x12xf32>
  %ar = nn.constant dense<[0, 1, 2, 3, 4]> : tensor<5xi64>
  %pe = nn.embedding %wpe, %ar : (tensor<5x12xf32>, tensor<5xi64>) -> tensor<5x12xf32>
  %x = nn.add %e, %pe : (tensor<2x5x12xf32>, tensor<5x12xf32>) -> tensor<2x5x12xf32>
  %g1 = nn.param "n1.weight" : tensor<12xf32>
  %b1 = nn.param "n1.bias" : tensor<12xf32>
  %h1 = nn.layer_norm %x weight %g1 bias %b1 : (tensor<2x5x12xf32>, tensor<12xf32>, tensor<12xf32>) -> tensor<2x5x12xf32>
  %wqkv = nn.param "qkv.weight" : tensor<36x12xf32>
  %qkv = nn.linear %h1, %wqkv : (tensor<2x5x12xf32>, tensor<36x12xf32>) -> tensor<2x5x36xf32>
  %qs = nn.slice %qkv {dim = 2 : i64, start = 0 : i64, end = 12 : i64} : (tensor<2x5x36xf32>) -> tensor<2x5x12xf32>
  %qr = nn.reshape %qs : tensor<2x5x12xf32> -> tensor<2x5x3x4xf32>
  %q = nn.transpose %qr {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %ks = nn.slice %qkv {dim = 2 : i64, start = 12 : i64, end = 24 : i64} : (tensor<2x5x36xf32>) -> tensor<2x5x12xf32>
  %kr = nn.reshape %ks : tensor<2x5x12xf32> -> tensor<2x5x3x4xf32>
  %k = nn.transpose %kr {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %vs = nn.slice %qkv {dim = 2 : i64, start = 24 : i64, end = 36 : i64} : (tensor<2x5x36xf32>) -> tensor<2x5x12xf32>
  %vr = nn.reshape %vs : tensor<2x5x12xf32> -> tensor<2x5x3x4xf32>
  %v = nn.transpose %vr {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x5x3x4xf32>) -> tensor<2x3x5x4xf32>
  %kt = nn.transpose %k {dim0 = 2 : i64, dim1 = 3 : i64} : (tensor<2x3x5x4xf32>) -> tensor<2x3x4x5xf32>
  %s = nn.matmul %q, %kt : (tensor<2x3x5x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x5x5xf32>
  %scale = nn.constant dense<5.000000e-01> : tensor<f32>
  %ss = nn.mul %s, %scale : (tensor<2x3x5x5xf32>, tensor<f32>) -> tensor<2x3x5x5xf32>
  %mask = nn.constant dense<[[false, true, true, true, true], [false, false, true, true, true], [false, false, false, true, true], [false, false, false, false, true], [false, false, false, false, false]]> : tensor<5x5xi1>
  %sm = nn.masked_fill %ss, %mask {value = 0xFFF0000000000000 : f64} : (tensor<2x3x5x5xf32>, tensor<5x5xi1>) -> tensor<2x3x5x5xf32>
  %p = nn.softmax %sm {dim = -1 : i64} : tensor<2x3x5x5xf32>
  %o = nn.matmul %p, %v : (tensor<2x3x5x5xf32>, tensor<2x3x5x4xf32>) -> tensor<2x3x5x4xf32>
  %ot = nn.transpose %o {dim0 = 1 : i64, dim1 = 2 : i64} : (tensor<2x3x5x4xf32>) -> tensor<2x5x3x4xf32>
  %oc = nn.contiguous %ot : tensor<2x5x3x4xf32>
  %om = nn.reshape %oc : tensor<2x5x3x4xf32> -> tensor<2x5x12xf32>
  %wp = nn.param "proj.weight" : tensor<12x12xf32>
  %bp = nn.param "proj.bias" : tensor<12xf32>
  %pr = nn.linear %om, %wp, %bp : (tensor<2x5x12xf32>, tensor<12x12xf32>, tensor<12xf32>) -> tensor<2x5x12xf32>
  %pd = nn.dropout %pr {p = 0.000000e+00 : f64} : tensor<2x5x12xf32>
  %x2 = nn.add %x, %pd : (tensor<2x5x12xf32>, tensor<2x5x12xf32>) -> tensor<2x5x12xf32>
  %g2 = nn.param "n2.weight" : tensor<12xf32>
  %b2 = nn.param "n2.bias" : tensor<12xf32>
  %h2 = nn.layer_norm %x2 weight %g2 bias %b2 : (tensor<2x5x12xf32>, tensor<12xf32>, tensor<12xf32>) -> tensor<2x5x12xf32>
  %w1 = nn.param "fc1.weight" : tensor<20x12xf32>
  %bf1 = nn.param "fc1.bias" : tensor<20xf32>
  %f1 = nn.linear %h2, %w1, %bf1 : (tensor<2x5x12xf32>, tensor<20x12xf32>, tensor<20xf32>) -> tensor<2x5x20xf32>
  %ge = nn.gelu %f1 : tensor<2x5x20xf32>
  %w2 = nn.param "fc2.weight" : tensor<12x20xf32>
  %bf2 = nn.param "fc2.bias" : tensor<12xf32>
  %f2 = nn.linear %ge, %w2, %bf2 : (tensor<2x5x20xf32>, tensor<12x20xf32>, tensor<12xf32>) -> tensor<2x5x12xf32>
  %x3 = nn.add %x2, %f2 : (tensor<2x5x12xf32>, tensor<2x5x12xf32>) -> tensor<2x5x12xf32>
  %gf = nn.param "nf.weight" : tensor<12xf32>
  %bf = nn.param "nf.bias" : tensor<12xf32>
  %hf = nn.layer_norm %x3 weight %gf bias %bf : (tensor<2x5x12xf32>, tensor<12xf32>, tensor<12xf32>) -> tensor<2x5x12xf32>
  %wh = nn.param "head.weight" : tensor<13x12xf32>
  %logits = nn.linear %hf, %wh : (tensor<2x5x12xf32>, tensor<13x12xf32>) -> tensor<2x5x13xf32>
  return %logits : tensor<2x5x13xf32>
}
