#pragma once
// FLOPs of a model, counted per operation from the shapes each one sees on one batch: the same
// counter for the built-in nets and a TorchScript model (it watches the ATen operations a forward
// calls, with their input and output shapes, as LibTorch's profiler does for its FLOPs).
//
// The convention (kFlopConvention): a multiply and an add count as two FLOPs (one
// multiply-accumulate = 2 FLOPs), so resnet18's forward on one 224 x 224 image is about
// 1.82 G multiply-accumulates = 3.64 GFLOPs. A training step is forward + backward, with
// backward = 2 x forward (one pass for the gradients of the inputs, one for those of the
// weights): 3 x forward. The optimiser's update is not counted.
//
// Per operation (the outermost ATen call only; what it calls inside is not counted again):
//   convolution     2 x output elements x (input channels / groups) x kernel area
//   linear, matmul  2 x M x N x K (addmm, mm, bmm, matmul, linear)
//   pooling         one per window element per output (max, avg); adaptive avg: one per input
//   normalisation   4 per element (batch/layer/group/instance norm: subtract, divide, scale, shift)
//   elementwise     one per output element (relu, add, mul, sigmoid, ...); softmax 3 per element
//   views, copies, shape queries, dropout outside training: none
// Anything else is not counted and named in FlopCount::uncounted (a TorchScript model can call
// operations this table does not know; the figure is then a lower bound and says so).
//
// Bias additions of convolutions and linear layers are not counted (as fvcore and most papers).
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "wb/common/result.h"
#include "wb/model/model.h"

namespace wb::model {

inline constexpr double kBackwardFactor = 2.0;  // backward = 2 x forward
inline constexpr const char* kFlopConvention =
    "FLOPs count a multiply and an add as two (1 multiply-accumulate = 2 FLOPs); a training step is "
    "forward + backward = 3 x forward (backward = 2 x forward); the optimiser's update is not counted";

struct OpFlops {
  std::string op;      // "aten::conv2d"
  std::string shape;   // the first input's shape, "[64, 1, 28, 28]"
  double flops = 0;
  bool matmul = false; // a convolution or a matrix product (what the measured peak is for)
};

struct FlopCount {
  int64_t batch = 0;                     // samples in the batch counted
  double forward = 0;                    // FLOPs of one forward pass on that batch
  double matmul = 0;                     // of which convolutions and matrix products
  std::vector<OpFlops> ops;              // every counted operation, in call order
  std::map<std::string, int> uncounted;  // operations not counted: name -> calls

  double trainingStep() const { return (1.0 + kBackwardFactor) * forward; }
  double trainingPerSample() const { return batch > 0 ? trainingStep() / static_cast<double>(batch) : 0.0; }
  // "" when everything was counted, else "not counted: aten::foo (2 calls), aten::bar (1 call)".
  std::string uncountedNote() const;
};

// Runs one forward on `input` (its batch size and shape are what is counted) in eval mode
// without gradients, so neither BatchNorm statistics nor the random generator move, then puts
// the model back in training mode. Thread affinity: the calling thread (the counter watches
// that thread's operations only). Errors (Errc::Model) carry the forward's failure.
Result<FlopCount> countForwardFlops(Model& model, const torch::Tensor& input);

// The counter itself: counts the operations `forward` runs on this thread for a batch of `batch`
// samples (the benchmarks' plain nets use it; the caller sets eval mode and no-grad).
Result<FlopCount> countFlopsOf(const std::function<void()>& forward, int64_t batch);

}  // namespace wb::model
