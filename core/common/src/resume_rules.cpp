#include "wb/common/resume_rules.h"

#include <filesystem>

#include "wb/common/paths.h"

namespace wb {

Status checkResumeFrom(const std::string& from) {
  if (from == "last" || from == "best") return {};
  return makeError(Errc::InvalidConfig, "--from " + from + ": pass --from last or --from best, with --resume RUN_DIR");
}

Status checkEpochsLeft(const std::string& what, int64_t trained, int epochs) {
  if (trained < epochs) return {};
  const std::string n = std::to_string(trained);
  return makeError(Errc::InvalidConfig, "train.epochs: " + what + " has already trained " + n +
                                            " epoch(s) and this run asks for " + std::to_string(epochs) +
                                            "; resume with --set train.epochs=N (N > " + n + ") to train further");
}

Status checkSameOptimizer(const std::string& what, const std::string& was, const std::string& asked) {
  if (was.empty() || was == asked) return {};
  return makeError(Errc::InvalidConfig, "optim.name: " + what + " was trained with " + was + " and this run asks for " +
                                            asked + "; resume with the same optimiser (--set optim.name=" + was +
                                            "), or start a new run to change it");
}

namespace {

bool isTorchScript(const std::string& model) { return model.rfind("torchscript:", 0) == 0; }

// "idx:/usr/share/datasets/fashion-mnist" for "fashion-mnist"; kind:<absolute normal path> else.
std::string datasetIdentity(const std::string& spec) {
  namespace fs = std::filesystem;
  std::string kind = "idx", dir = defaultFashionMnistDir().string();
  if (spec != "fashion-mnist") {
    const auto colon = spec.find(':');
    if (colon == std::string::npos) return spec;
    kind = spec.substr(0, colon);
    dir = spec.substr(colon + 1);
  }
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  if (ec) abs = dir;
  std::string norm = abs.lexically_normal().string();
  while (norm.size() > 1 && norm.back() == '/') norm.pop_back();
  return kind + ":" + norm;
}

}  // namespace

Status checkSameModel(const std::string& what, const std::string& was, const std::string& asked) {
  if (was.empty() || was == asked || (isTorchScript(was) && isTorchScript(asked))) return {};
  return makeError(Errc::InvalidConfig, "model.name: " + what + " was trained as " + was + " and this run asks for " +
                                            asked + "; a resume continues those weights, so it keeps the model (--set "
                                            "model.name=" + was + "), or start a new run to train " + asked);
}

bool sameDataset(const std::string& a, const std::string& b) { return a == b || datasetIdentity(a) == datasetIdentity(b); }

Status checkSameDataset(const std::string& what, const std::string& was, const std::string& asked, bool fineTune) {
  const bool same = was.empty() || sameDataset(was, asked);
  if (same && fineTune)
    return makeError(Errc::InvalidConfig, "--fine-tune: " + what + " already trains on " + asked +
                                              "; pass --fine-tune with --set data.dataset=<another dataset>, or resume "
                                              "without it");
  if (same || fineTune) return {};
  return makeError(Errc::InvalidConfig, "data.dataset: " + what + " was trained on " + was + " and this run asks for " +
                                            asked + "; a resume continues on its own data (--set data.dataset=" + was +
                                            "); to continue its weights on " + asked + " pass --fine-tune (the run is "
                                            "then marked fine-tuned from " + was + "), or start a new run");
}

}  // namespace wb
