// A checkpoint pattern without wildcards matches as peft's target_modules
// do: a module whose path is the name or ends with it (`fc2` selects
// `a.fc2`); a pattern that selects nothing is an error naming the nearest
// module names.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" --vram-checkpoint="modules=fc2" | FileCheck %s --check-prefix=SUFFIX
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd" --vram-checkpoint="modules=fc9" -verify-diagnostics -o /dev/null

// a.fc2 (16x16 weight) is recomputed before its backward node; nothing
// else is.
// SUFFIX-LABEL: func.func @step
// SUFFIX-NOT: recompute
// SUFFIX: nn.linear %{{.*}} {nn.phase = #nn<phase recompute>} : (tensor<2x16xf32>, tensor<16x16xf32>)
// SUFFIX-NEXT: nn.backward "nn.linear"
// SUFFIX-NOT: recompute

// expected-error @+1 {{checkpoint pattern 'fc9' matches no module of the forward (patterns are globs over module paths, such as 'model.layers.*', or module names, matching the modules whose path is or ends with them); nearest module names: fc1, fc2, fc}}
func.func @forward(%x: tensor<2x8xf32>) -> tensor<2x4xf32> {
  %w1 = nn.param "a.fc1.weight" : tensor<16x8xf32> loc("a.fc1")
  %h1 = nn.linear %x, %w1 : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32> loc("a.fc1")
  %r = nn.relu %h1 : tensor<2x16xf32> loc("a.act")
  %w2 = nn.param "a.fc2.weight" : tensor<16x16xf32> loc("a.fc2")
  %h2 = nn.linear %r, %w2 : (tensor<2x16xf32>, tensor<16x16xf32>) -> tensor<2x16xf32> loc("a.fc2")
  %w3 = nn.param "b.fc.weight" : tensor<4x16xf32> loc("b.fc")
  %o = nn.linear %h2, %w3 : (tensor<2x16xf32>, tensor<4x16xf32>) -> tensor<2x4xf32> loc("b.fc")
  return %o : tensor<2x4xf32>
}
