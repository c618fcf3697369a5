#include "wb/common/choices.h"

namespace wb {

const std::vector<Choice>& modelChoices() {
  static const std::vector<Choice> v = {
      {"lenet", "lenet", "LeNet (PyTorch's MNIST example): two 5x5 convolutions, two dense layers"},
      {"mnist-cnn", "mnist-cnn", "two 3x3 convolutions (32, 64), dropout, two dense layers"},
      {"mlp", "mlp", "three dense layers (256, 128) on the flattened image"},
      {"resnet18", "resnet18", "ResNet-18 (torchvision's layout, BatchNorm)"},
  };
  return v;
}

const std::vector<Choice>& optimizerChoices() {
  static const std::vector<Choice> v = {
      {"sgd", "sgd", "stochastic gradient descent with optim.momentum (and optim.nesterov)"},
      {"adam", "adam", "Adam"},
      {"adamw", "adamw", "Adam with decoupled weight decay"},
      {"adadelta", "adadelta", "Adadelta"},
  };
  return v;
}

const std::vector<Choice>& scheduleChoices() {
  static const std::vector<Choice> v = {
      {"constant", "constant", "optim.lr throughout"},
      {"step", "step decay", "multiplies the rate by optim.gamma every optim.step_size epochs"},
      {"cosine", "cosine", "linear warm-up for optim.warmup_fraction of the steps, then cosine decay to zero"},
      {"onecycle", "one-cycle", "OneCycleLR: cosine from optim.lr/25 up to optim.lr (optim.warmup_fraction, default 0.3), then down"},
  };
  return v;
}

const std::vector<Choice>& lrScalingChoices() {
  static const std::vector<Choice> v = {
      {"none", "none", "optim.lr whatever the devices"},
      {"linear", "linear", "optim.lr x devices after a warm-up (optim.lr_scaling_warmup): the linear scaling rule"},
      {"sqrt", "square root", "optim.lr x sqrt(devices) after a warm-up (optim.lr_scaling_warmup)"},
  };
  return v;
}

const std::vector<Choice>& precisionChoices() {
  static const std::vector<Choice> v = {
      {"32-true", "32-bit (off)", "fp32 everywhere"},
      {"bf16-mixed", "bf16 mixed", "bf16 autocast on the CPU or the GPU"},
      {"16-mixed", "fp16 mixed", "fp16 autocast with dynamic loss scaling", true, "use bf16-mixed on CPU"},
  };
  return v;
}

const std::vector<Choice>& decodedCacheChoices() {
  static const std::vector<Choice> v = {
      {"off", "off", "decode every image every epoch"},
      {"memory", "in memory", "keep the decoded pixels in this process's memory"},
      {"disk", "on disk", "keep them in a file in data.cache_dir, kept across runs, for data larger than memory"},
  };
  return v;
}

const std::vector<Choice>& shardingChoices() {
  static const std::vector<Choice> v = {
      {"off", "off", "every rank holds the whole optimiser state"},
      {"zero1", "ZeRO-1 (optimiser state)", "each rank holds 1/devices of the optimiser state"},
      {"zero2", "ZeRO-2 (+ gradients)", "ZeRO-1, and each rank keeps only its share of the gradients"},
  };
  return v;
}

const std::vector<Choice>& monitorChoices() {
  static const std::vector<Choice> v = {
      {"val_loss", "validation loss (lower is better)", "the validation loss"},
      {"val_acc", "validation accuracy (higher is better)", "the validation accuracy"},
  };
  return v;
}

const std::vector<Choice>& modeChoices() {
  static const std::vector<Choice> v = {
      {"min", "min", "lower is better"},
      {"max", "max", "higher is better"},
  };
  return v;
}

const std::vector<Choice>& datasetKinds() {
  static const std::vector<Choice> v = {
      {"fashion-mnist", "Fashion-MNIST (built in)", "Fashion-MNIST, installed with the workbench"},
      {"folder", "Image folder (one folder per class)", "folder:<dir>: an ImageFolder, one sub-folder per class"},
      {"idx", "IDX files (MNIST format)", "idx:<dir>: MNIST-format IDX files"},
      {"cifar10", "CIFAR-10 binary", "cifar10:<dir>: the CIFAR-10 binary batches"},
  };
  return v;
}

const Choice* findChoice(const std::vector<Choice>& choices, const std::string& value) {
  for (const auto& c : choices)
    if (value == c.value) return &c;
  return nullptr;
}

std::string choiceValues(const std::vector<Choice>& choices, const char* sep) {
  std::string out;
  for (const auto& c : choices) {
    if (!out.empty()) out += sep;
    out += c.value;
  }
  return out;
}

std::string needsCuda(const std::string& instead) { return "needs CUDA; " + instead; }

}  // namespace wb
