#pragma once
// Model registry: built-in nets (mlp, lenet, mnist-cnn, resnet18) and TorchScript import
// (torchscript:<file.pt> trains a user's scripted model as is). Input channels and classes
// adapt to the dataset. Thread affinity: a Model is used from one thread at a time.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "wb/common/result.h"

namespace wb::model {

struct ModelSpec {
  std::string name;        // "lenet" | "mnist-cnn" | "mlp" | "resnet18" | "torchscript:<file>"
  int in_channels = 1;
  int num_classes = 10;
  int image_size = 28;     // square input side the model will see
};

using NamedTensors = std::vector<std::pair<std::string, torch::Tensor>>;

class Model {
 public:
  virtual ~Model() = default;
  // Logits [B, num_classes] for float input [B, C, H, W].
  virtual torch::Tensor forward(const torch::Tensor& x) = 0;
  // Trainable parameters, in a fixed (registration) order identical on every rank.
  virtual std::vector<torch::Tensor> parameters() = 0;
  virtual NamedTensors namedParameters() = 0;
  virtual NamedTensors namedBuffers() = 0;   // e.g. BatchNorm running stats
  virtual void train(bool on) = 0;
  virtual void to(const torch::Device& device) = 0;
  virtual std::string name() const = 0;
  int64_t parameterCount();
  // Copies values (same names and shapes) from another model's state: tensors are copied in
  // place under NoGradGuard. Error names the first mismatching tensor.
  Status loadState(const NamedTensors& params, const NamedTensors& buffers);
};

// Creates a model. Errors (Errc::Model) name the model and what is wrong, e.g. an unknown name
// (listing the known ones), an image too small for the net, or a TorchScript file that cannot be
// loaded or whose forward fails on a dummy batch of the dataset's shape.
Result<std::unique_ptr<Model>> createModel(const ModelSpec& spec);

// Names of the built-in nets, in registry order: mlp, lenet, mnist-cnn, resnet18.
std::vector<std::string> builtinModels();

// Smallest square image side a built-in net takes (lenet 16, mnist-cnn 6, resnet18 8, mlp 1);
// 0 for a name that is not a built-in.
int minImageSize(const std::string& name);

// The prefix of the TorchScript model name: "torchscript:<file.pt>".
inline constexpr const char* kTorchScriptPrefix = "torchscript:";

}  // namespace wb::model
