// The model registry and the Model methods shared by every kind of model.
#include "wb/model/model.h"

#include <functional>
#include <map>
#include <sstream>

#include "torchscript_model.h"
#include "wb/model/nets.h"

namespace wb::model {
namespace {

template <class Items>
NamedTensors toNamed(const Items& items) {
  NamedTensors out;
  out.reserve(items.size());
  for (const auto& item : items) out.emplace_back(item.key(), item.value());
  return out;
}

// A built-in net behind the Model interface. Net is a TORCH_MODULE holder.
template <class Net>
class BuiltinModel final : public Model {
 public:
  BuiltinModel(std::string name, Net net) : name_(std::move(name)), net_(std::move(net)) {}
  torch::Tensor forward(const torch::Tensor& x) override { return net_->forward(x); }
  std::vector<torch::Tensor> parameters() override { return net_->parameters(); }
  NamedTensors namedParameters() override { return toNamed(net_->named_parameters()); }
  NamedTensors namedBuffers() override { return toNamed(net_->named_buffers()); }
  void train(bool on) override { net_->train(on); }
  void to(const torch::Device& device) override { net_->to(device); }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  Net net_;
};

struct Builtin {
  std::string name;
  int64_t min_image_size;
  std::function<std::unique_ptr<Model>(const NetOptions&)> make;
};

template <class Net>
Builtin builtin(const char* name) {
  return {name, Net::Impl::kMinImageSize, [name](const NetOptions& options) {
            return std::make_unique<BuiltinModel<Net>>(name, Net(options));
          }};
}

const std::vector<Builtin>& registry() {
  static const std::vector<Builtin> all = {builtin<Mlp>("mlp"), builtin<LeNet>("lenet"),
                                           builtin<MnistCnn>("mnist-cnn"),
                                           builtin<ResNet18>("resnet18")};
  return all;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string shapeStr(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

Error modelError(std::string message) { return makeError(Errc::Model, std::move(message)); }

// Checks that `source` has exactly the names of `own` with the same shapes.
Status checkSame(const char* kind, const NamedTensors& own, const NamedTensors& source) {
  std::map<std::string, torch::Tensor> by_name(source.begin(), source.end());
  for (const auto& [name, dst] : own) {
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      return modelError(std::string("loadState: ") + kind + " '" + name +
                        "' of this model is missing from the source state — it was saved from a "
                        "different model; load a state of the same model");
    }
    if (!it->second.defined() || it->second.sizes() != dst.sizes()) {
      return modelError(std::string("loadState: ") + kind + " '" + name + "' has shape " +
                        shapeStr(dst) + " here but " +
                        (it->second.defined() ? shapeStr(it->second) : "undefined") +
                        " in the source state — it was saved for another dataset shape or "
                        "model; use the same model, channels, classes and image size");
    }
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    return modelError(std::string("loadState: the source state has ") + kind + " '" +
                      by_name.begin()->first +
                      "' that this model lacks — it was saved from a different model");
  }
  return {};
}

void copyAll(const NamedTensors& own, const NamedTensors& source) {
  std::map<std::string, torch::Tensor> by_name(source.begin(), source.end());
  for (const auto& [name, dst] : own) dst.copy_(by_name.at(name));
}

Status checkSpec(const ModelSpec& spec) {
  if (spec.in_channels < 1) {
    return modelError("model " + spec.name + ": in_channels " + std::to_string(spec.in_channels) +
                      " — the dataset must give at least 1 channel");
  }
  if (spec.num_classes < 1) {
    return modelError("model " + spec.name + ": num_classes " + std::to_string(spec.num_classes) +
                      " — the dataset must have at least 1 class");
  }
  if (spec.image_size < 1) {
    return modelError("model " + spec.name + ": image_size " + std::to_string(spec.image_size) +
                      " — must be >= 1 (set data.image_size or use a dataset with images)");
  }
  return {};
}

std::string fittingModels(int image_size) {
  std::vector<std::string> fit;
  for (const auto& b : registry()) {
    if (b.min_image_size <= image_size) fit.push_back(b.name);
  }
  return joined(fit);
}

}  // namespace

int64_t Model::parameterCount() {
  int64_t n = 0;
  for (const auto& p : parameters()) n += p.numel();
  return n;
}

Status Model::loadState(const NamedTensors& params, const NamedTensors& buffers) {
  // Check everything before copying anything: a refused state leaves the model unchanged.
  const NamedTensors own_params = namedParameters();
  const NamedTensors own_buffers = namedBuffers();
  if (auto s = checkSame("parameter", own_params, params); !s) return s;
  if (auto s = checkSame("buffer", own_buffers, buffers); !s) return s;
  torch::NoGradGuard no_grad;
  copyAll(own_params, params);
  copyAll(own_buffers, buffers);
  return {};
}

std::vector<std::string> builtinModels() {
  std::vector<std::string> names;
  for (const auto& b : registry()) names.push_back(b.name);
  return names;
}

int minImageSize(const std::string& name) {
  for (const auto& b : registry()) {
    if (b.name == name) return static_cast<int>(b.min_image_size);
  }
  return 0;
}

Result<std::unique_ptr<Model>> createModel(const ModelSpec& spec) {
  if (auto s = checkSpec(spec); !s) return s.error();
  const std::string prefix = kTorchScriptPrefix;
  if (spec.name.rfind(prefix, 0) == 0) {
    return detail::loadTorchScriptModel(spec.name.substr(prefix.size()), spec);
  }
  for (const auto& b : registry()) {
    if (b.name != spec.name) continue;
    if (spec.image_size < b.min_image_size) {
      return modelError("model.name: " + b.name + " needs images of at least " +
                        std::to_string(b.min_image_size) + " px but the dataset gives " +
                        std::to_string(spec.image_size) + " px — set data.image_size >= " +
                        std::to_string(b.min_image_size) + " or choose a model that fits (" +
                        fittingModels(spec.image_size) + ")");
    }
    try {
      return b.make(NetOptions(spec.in_channels, spec.num_classes, spec.image_size));
    } catch (const c10::Error& e) {
      return modelError("model.name: building " + b.name + " failed: " + e.what_without_backtrace());
    }
  }
  return modelError("model.name: '" + spec.name + "' is not a known model — choose one of " +
                    joined(builtinModels()) + ", " + prefix + "<file.pt>");
}

}  // namespace wb::model
