#include "wb/model/nets.h"

namespace wb::model {
namespace {

namespace F = torch::nn::functional;

// Side of a square feature map after a conv or pool (floor division, as PyTorch does).
int64_t outSide(int64_t side, int64_t kernel, int64_t stride = 1, int64_t padding = 0) {
  return (side + 2 * padding - kernel) / stride + 1;
}

torch::nn::Conv2dOptions conv(int64_t in, int64_t out, int64_t kernel) {
  return torch::nn::Conv2dOptions(in, out, kernel);
}

// torchvision's conv3x3 / conv1x1: no bias, BatchNorm follows.
torch::nn::Conv2d conv3x3(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Conv2d(conv(in, out, 3).stride(stride).padding(1).bias(false));
}

torch::nn::Conv2d conv1x1(int64_t in, int64_t out, int64_t stride) {
  return torch::nn::Conv2d(conv(in, out, 1).stride(stride).bias(false));
}

}  // namespace

// ---- mlp --------------------------------------------------------------------------------

MlpImpl::MlpImpl(const NetOptions& o) {
  const int64_t in = o.in_channels() * o.image_size() * o.image_size();
  fc1_ = register_module("fc1", torch::nn::Linear(in, 256));
  fc2_ = register_module("fc2", torch::nn::Linear(256, 128));
  fc3_ = register_module("fc3", torch::nn::Linear(128, o.num_classes()));
}

torch::Tensor MlpImpl::forward(torch::Tensor x) {
  x = torch::relu(fc1_->forward(x.flatten(1)));
  x = torch::relu(fc2_->forward(x));
  return fc3_->forward(x);
}

// ---- lenet ------------------------------------------------------------------------------

LeNetImpl::LeNetImpl(const NetOptions& o) {
  const int64_t side = outSide(outSide(o.image_size(), 5) / 2, 5) / 2;
  TORCH_CHECK(o.image_size() >= kMinImageSize && side >= 1, "lenet: image side ", o.image_size(),
              " is below its minimum of ", kMinImageSize);
  conv1_ = register_module("conv1", torch::nn::Conv2d(conv(o.in_channels(), 10, 5)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(conv(10, 20, 5)));
  conv2_drop_ = register_module("conv2_drop", torch::nn::Dropout2d());
  fc1_ = register_module("fc1", torch::nn::Linear(20 * side * side, 50));
  fc2_ = register_module("fc2", torch::nn::Linear(50, o.num_classes()));
  drop_ = register_module("dropout", torch::nn::Dropout(0.5));
}

torch::Tensor LeNetImpl::forward(torch::Tensor x) {
  x = torch::relu(F::max_pool2d(conv1_->forward(x), F::MaxPool2dFuncOptions(2)));
  x = torch::relu(F::max_pool2d(conv2_drop_->forward(conv2_->forward(x)), F::MaxPool2dFuncOptions(2)));
  x = torch::relu(fc1_->forward(x.flatten(1)));
  return fc2_->forward(drop_->forward(x));
}

// ---- mnist-cnn --------------------------------------------------------------------------

MnistCnnImpl::MnistCnnImpl(const NetOptions& o) {
  const int64_t side = outSide(outSide(o.image_size(), 3), 3) / 2;
  TORCH_CHECK(o.image_size() >= kMinImageSize && side >= 1, "mnist-cnn: image side ",
              o.image_size(), " is below its minimum of ", kMinImageSize);
  conv1_ = register_module("conv1", torch::nn::Conv2d(conv(o.in_channels(), 32, 3)));
  conv2_ = register_module("conv2", torch::nn::Conv2d(conv(32, 64, 3)));
  dropout1_ = register_module("dropout1", torch::nn::Dropout(0.25));
  dropout2_ = register_module("dropout2", torch::nn::Dropout(0.5));
  fc1_ = register_module("fc1", torch::nn::Linear(64 * side * side, 128));
  fc2_ = register_module("fc2", torch::nn::Linear(128, o.num_classes()));
}

torch::Tensor MnistCnnImpl::forward(torch::Tensor x) {
  x = torch::relu(conv1_->forward(x));
  x = torch::relu(conv2_->forward(x));
  x = dropout1_->forward(F::max_pool2d(x, F::MaxPool2dFuncOptions(2)));
  x = torch::relu(fc1_->forward(x.flatten(1)));
  return fc2_->forward(dropout2_->forward(x));
}

// ---- resnet18 ---------------------------------------------------------------------------

BasicBlockImpl::BasicBlockImpl(int64_t in_planes, int64_t planes, int64_t stride) {
  conv1_ = register_module("conv1", conv3x3(in_planes, planes, stride));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(planes));
  conv2_ = register_module("conv2", conv3x3(planes, planes, 1));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(planes));
  if (stride != 1 || in_planes != planes) {
    downsample_ = register_module(
        "downsample",
        torch::nn::Sequential(conv1x1(in_planes, planes, stride), torch::nn::BatchNorm2d(planes)));
  }
}

torch::Tensor BasicBlockImpl::forward(torch::Tensor x) {
  torch::Tensor identity = downsample_ ? downsample_->forward(x) : x;
  torch::Tensor out = torch::relu(bn1_->forward(conv1_->forward(x)));
  out = bn2_->forward(conv2_->forward(out));
  return torch::relu(out + identity);
}

namespace {

torch::nn::Sequential resnetStage(int64_t in_planes, int64_t planes, int64_t stride) {
  return torch::nn::Sequential(BasicBlock(in_planes, planes, stride), BasicBlock(planes, planes, 1));
}

}  // namespace

ResNet18Impl::ResNet18Impl(const NetOptions& o)
    : imagenet_stem_(o.image_size() >= kResNetImageNetStemFrom) {
  // Below 8 px layer4 would only convolve padding.
  TORCH_CHECK(o.image_size() >= kMinImageSize, "resnet18: image side ", o.image_size(),
              " is below its minimum of ", kMinImageSize);
  // The CIFAR stem keeps small images at full resolution into layer1; the ImageNet stem
  // quarters them first, which is what torchvision's resnet18 does.
  conv1_ = register_module(
      "conv1", imagenet_stem_
                   ? torch::nn::Conv2d(conv(o.in_channels(), 64, 7).stride(2).padding(3).bias(false))
                   : conv3x3(o.in_channels(), 64, 1));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(64));
  layer1_ = register_module("layer1", resnetStage(64, 64, 1));
  layer2_ = register_module("layer2", resnetStage(64, 128, 2));
  layer3_ = register_module("layer3", resnetStage(128, 256, 2));
  layer4_ = register_module("layer4", resnetStage(256, 512, 2));
  fc_ = register_module("fc", torch::nn::Linear(512, o.num_classes()));

  // torchvision's init: He-normal (fan_out) convolutions, BatchNorm weight 1 / bias 0
  // (LibTorch's BatchNorm default), default Linear init.
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* c = module->as<torch::nn::Conv2d>()) {
      torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
    }
  }
}

torch::Tensor ResNet18Impl::forward(torch::Tensor x) {
  x = torch::relu(bn1_->forward(conv1_->forward(x)));
  if (imagenet_stem_) {
    x = F::max_pool2d(x, F::MaxPool2dFuncOptions(3).stride(2).padding(1));
  }
  x = layer4_->forward(layer3_->forward(layer2_->forward(layer1_->forward(x))));
  x = F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions(1)).flatten(1);
  return fc_->forward(x);
}

}  // namespace wb::model
