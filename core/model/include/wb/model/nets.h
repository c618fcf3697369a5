#pragma once
// The built-in nets as plain LibTorch modules (FooImpl : torch::nn::Module + TORCH_MODULE(Foo)).
// createModel() wraps them behind wb::model::Model; they are public so that benchmarks can
// compare the workbench against a textbook LibTorch loop on the very same net.
//
// Every net returns logits [B, num_classes] for float input [B, in_channels, size, size].
// Constructors expect image_size >= kMinImageSize; createModel checks it and returns an error,
// the constructors throw c10::Error (a broken invariant) if called with less.
// Parameter names follow the reference implementations (conv1.weight, layer1.0.bn1.bias, fc.weight).
#include <cstdint>

#include <torch/torch.h>

namespace wb::model {

struct NetOptions {
  NetOptions(int64_t in_channels, int64_t num_classes, int64_t image_size)
      : in_channels_(in_channels), num_classes_(num_classes), image_size_(image_size) {}
  TORCH_ARG(int64_t, in_channels);
  TORCH_ARG(int64_t, num_classes);
  TORCH_ARG(int64_t, image_size);
};

// Flatten -> 256 -> 128 -> classes, ReLU between.
class MlpImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kMinImageSize = 1;
  explicit MlpImpl(const NetOptions& options);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr}, fc3_{nullptr};
};
TORCH_MODULE(Mlp);

// LibTorch's classic MNIST example net (examples/cpp/mnist): conv 10 k5, pool, relu,
// conv 20 k5 + Dropout2d, pool, relu, fc 50, relu, dropout 0.5, fc classes.
// 21840 parameters at 1x28x28 / 10 classes (fc1 input 320 there; it follows the image size).
class LeNetImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kMinImageSize = 16;
  explicit LeNetImpl(const NetOptions& options);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Dropout2d conv2_drop_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
  torch::nn::Dropout drop_{nullptr};
};
TORCH_MODULE(LeNet);

// PyTorch's examples/mnist net: conv 32 k3, relu, conv 64 k3, relu, pool 2, dropout 0.25,
// fc 128, relu, dropout 0.5, fc classes. 1199882 parameters at 1x28x28 (fc1 input 9216 there).
class MnistCnnImpl : public torch::nn::Module {
 public:
  static constexpr int64_t kMinImageSize = 6;
  explicit MnistCnnImpl(const NetOptions& options);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::Dropout dropout1_{nullptr}, dropout2_{nullptr};
  torch::nn::Linear fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(MnistCnn);

// torchvision's BasicBlock.
class BasicBlockImpl : public torch::nn::Module {
 public:
  BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride);
  torch::Tensor forward(torch::Tensor x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr};
  torch::nn::Sequential downsample_{nullptr};  // registered only when the shape changes
};
TORCH_MODULE(BasicBlock);

// torchvision's resnet18 ([2,2,2,2] BasicBlocks, BatchNorm, its weight init). Below
// kResNetImageNetStemFrom px the CIFAR stem (3x3 conv stride 1, no max-pool), from it the
// ImageNet stem (7x7 conv stride 2 + 3x3 max-pool stride 2).
// 11173962 parameters at 3x32x32 / 10 classes, 11181642 at 3x64x64.
constexpr int64_t kResNetImageNetStemFrom = 64;

class ResNet18Impl : public torch::nn::Module {
 public:
  static constexpr int64_t kMinImageSize = 8;
  explicit ResNet18Impl(const NetOptions& options);
  torch::Tensor forward(torch::Tensor x);
  bool imagenetStem() const { return imagenet_stem_; }

 private:
  bool imagenet_stem_ = false;
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Sequential layer1_{nullptr}, layer2_{nullptr}, layer3_{nullptr}, layer4_{nullptr};
  torch::nn::Linear fc_{nullptr};
};
TORCH_MODULE(ResNet18);

}  // namespace wb::model
