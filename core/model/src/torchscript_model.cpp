// torchscript:<file.pt> — a user's scripted model trained as is.
#include "torchscript_model.h"

#include <filesystem>
#include <sstream>

#include <torch/script.h>

namespace wb::model::detail {
namespace {

template <class List>
NamedTensors toNamed(const List& list) {
  NamedTensors out;
  for (const auto& item : list) out.emplace_back(item.name, item.value);
  return out;
}

class TorchScriptModel final : public Model {
 public:
  TorchScriptModel(std::string path, torch::jit::Module module)
      : path_(std::move(path)), module_(std::move(module)) {}

  torch::Tensor forward(const torch::Tensor& x) override {
    return module_.forward({x}).toTensor();
  }
  std::vector<torch::Tensor> parameters() override {
    std::vector<torch::Tensor> out;
    for (const auto& p : module_.parameters(/*recurse=*/true)) out.push_back(p);
    return out;
  }
  NamedTensors namedParameters() override { return toNamed(module_.named_parameters(true)); }
  NamedTensors namedBuffers() override { return toNamed(module_.named_buffers(true)); }
  void train(bool on) override { module_.train(on); }
  void to(const torch::Device& device) override { module_.to(device); }
  std::string name() const override { return kTorchScriptPrefix + path_; }

 private:
  std::string path_;
  torch::jit::Module module_;
};

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string shapeStr(c10::IntArrayRef sizes) {
  std::ostringstream s;
  s << sizes;
  return s.str();
}

// A module lacking the `training` attribute (only hand-built ones) cannot be switched; the
// forward check has already reported it, so this must not throw.
void restoreTraining(torch::jit::Module& module, bool on) {
  try {
    module.train(on);
  } catch (const std::exception&) {
  }
}

Error tsError(const std::string& path, const std::string& what) {
  return makeError(Errc::Model, "model.name: torchscript file '" + path + "' " + what);
}

// Runs forward on a zero batch of the dataset's shape in eval mode without grad, so a
// BatchNorm's running statistics are not touched, then restores the training flag.
Status checkForward(const std::string& path, torch::jit::Module& module, const ModelSpec& spec) {
  const int64_t batch = 2;
  const auto input = torch::zeros({batch, spec.in_channels, spec.image_size, spec.image_size});
  const std::string shape_note = "a dummy batch of shape " + shapeStr(input.sizes()) + " (" +
                                 std::to_string(spec.in_channels) + " channel(s), " +
                                 std::to_string(spec.image_size) + " px, float32)";
  const bool was_training = module.is_training();
  c10::IValue out;
  try {
    module.eval();
    torch::NoGradGuard no_grad;
    out = module.forward({input});
  } catch (const std::exception& e) {
    restoreTraining(module, was_training);
    const auto* c10e = dynamic_cast<const c10::Error*>(&e);
    return tsError(path, "failed in forward on " + shape_note + ": " +
                             firstLine(c10e ? c10e->what_without_backtrace() : e.what()) +
                             " — make forward(x) accept float input [B, C, H, W] of the dataset's "
                             "shape (or set data.image_size)");
  }
  restoreTraining(module, was_training);
  if (!out.isTensor()) {
    return tsError(path, "returned a " + out.tagKind() + " from forward on " + shape_note +
                             " — forward must return one logits tensor [B, num_classes]");
  }
  const auto sizes = out.toTensor().sizes();
  if (sizes.size() != 2 || sizes[0] != batch || sizes[1] != spec.num_classes) {
    return tsError(path, "returned shape " + shapeStr(sizes) + " from forward on " + shape_note +
                             "; the dataset needs logits [" + std::to_string(batch) + ", " +
                             std::to_string(spec.num_classes) + "] — make the last layer output " +
                             std::to_string(spec.num_classes) + " classes");
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Model>> loadTorchScriptModel(const std::string& path, const ModelSpec& spec) {
  if (path.empty()) {
    return makeError(Errc::Model,
                     "model.name: 'torchscript:' names no file — write torchscript:<file.pt>");
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return tsError(path, "does not exist or is not a file — fix the path, or export the model "
                         "with torch.jit.script(model).save('" + path + "')");
  }
  torch::jit::Module module;
  try {
    module = torch::jit::load(path, torch::kCPU);
  } catch (const c10::Error& e) {
    return tsError(path, "is not a TorchScript archive (" + firstLine(e.what_without_backtrace()) +
                             ") — save it with torch.jit.script(model).save(path) or "
                             "torch.jit.trace(...).save(path), not torch.save(state_dict)");
  } catch (const std::exception& e) {
    return tsError(path, std::string("could not be loaded (") + firstLine(e.what()) +
                             ") — save it with torch.jit.script(model).save(path)");
  }
  if (auto s = checkForward(path, module, spec); !s) return s.error();
  return std::unique_ptr<Model>(std::make_unique<TorchScriptModel>(path, std::move(module)));
}

}  // namespace wb::model::detail
