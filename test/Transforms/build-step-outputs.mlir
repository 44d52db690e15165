// A model with several outputs (a torch.export archive of a Hugging Face
// model returns its logits and more): loss-output=1 names the one the loss
// reads; the caller holds the others (`out`) until the loss returns
// (nn.keep_alive {model_frame} past the loss), then nothing does.
// RUN: vram-opt %s --vram-build-step="mode=train optimizer=sgd loss=cross_entropy loss-output=1" | FileCheck %s --check-prefix=OUT1
// OUT1-LABEL: func.func @step(%arg0: tensor<2x8xf32>, %arg1: tensor<2xi64>) -> tensor<f32>
// OUT1: %[[H:.*]] = nn.linear %arg0
// OUT1: %[[Y:.*]] = nn.linear %[[H]]
// OUT1-NEXT: %[[LOSS:.*]] = nn.cross_entropy %[[Y]], %arg1
// OUT1: nn.keep_alive %[[H]] : tensor<2x8xf32> {model_frame}
// OUT1-NEXT: nn.backward "nn.cross_entropy"
// OUT1: return %[[LOSS]] : tensor<f32>
func.func @forward(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>) {
  %w = nn.param "w" : tensor<8x8xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
  %v = nn.param "v" : tensor<4x8xf32>
  %y = nn.linear %h, %v : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  return %h, %y : tensor<2x8xf32>, tensor<2x4xf32>
}
