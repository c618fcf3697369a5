#include "wb/train/resume_check.h"

#include <map>

#include <nlohmann/json.hpp>

#include "wb/common/resume_rules.h"
#include "wb/data/dataset.h"
#include "wb/model/model.h"

namespace wb::train {
using nlohmann::json;

namespace {

std::string shapeText(const torch::Tensor& t) {
  std::string s = "[";
  for (int64_t d = 0; d < t.dim(); ++d) s += (d ? ", " : "") + std::to_string(t.size(d));
  return s + "]";
}

// The field a shape mismatch is blamed on: the first of those the resume changed.
std::string changedField(const json& written, const Config& c) {
  auto was = [&](const char* p) { return written.value(json::json_pointer(p), json()); };
  if (was("/model/name") != json(c.model.name)) return "model.name: " + c.model.name;
  if (was("/data/dataset").is_string() && !sameDataset(was("/data/dataset").get<std::string>(), c.data.dataset))
    return "data.dataset: " + c.data.dataset;
  return "data.image_size: " + std::to_string(c.data.image_size);
}

// The first parameter whose name or shape differs between the checkpoint and `fresh`; empty when all fit.
std::string firstMismatch(const model::NamedTensors& saved, const model::NamedTensors& fresh) {
  std::map<std::string, torch::Tensor> byName(saved.begin(), saved.end());
  for (const auto& [name, t] : fresh) {
    auto it = byName.find(name);
    if (it == byName.end()) return "parameter '" + name + "' is not in the checkpoint";
    if (!it->second.sizes().equals(t.sizes()))
      return "parameter '" + name + "' has shape " + shapeText(it->second) + " in the checkpoint but " +
             shapeText(t) + " here";
    byName.erase(it);
  }
  if (!byName.empty()) return "the checkpoint's parameter '" + byName.begin()->first + "' has no place here";
  return "";
}

}  // namespace

Status checkCheckpointFits(const CheckpointData& ck, const Config& c, const std::string& what, bool fineTune) {
  const json written = json::parse(ck.config_json, nullptr, false);
  if (!written.is_object()) return {};  // unknown: the ranks' own check decides
  auto was = [&](const char* p) { return written.value(json::json_pointer(p), std::string()); };
  if (auto st = checkSameModel(what, was("/model/name"), c.model.name); !st) return st;
  if (auto st = checkSameDataset(what, was("/data/dataset"), c.data.dataset, fineTune); !st) return st;
  const bool sameShapes = was("/model/name") == c.model.name && sameDataset(was("/data/dataset"), c.data.dataset) &&
                          written.value(json::json_pointer("/data/image_size"), 0) == c.data.image_size;
  if (sameShapes) return {};

  auto train = data::openDataset(c.data.dataset, "train");
  if (!train.ok()) return train.error();
  const data::DatasetInfo& info = (*train)->info();
  const int imageSize = c.data.image_size > 0 ? c.data.image_size : info.height;
  if (imageSize <= 0) return {};  // images of mixed sizes: the ranks refuse that themselves
  auto created = model::createModel({c.model.name, info.channels, info.num_classes, imageSize});
  if (!created.ok()) return created.error();
  const std::string mismatch = firstMismatch(ck.params, (*created)->namedParameters());
  if (mismatch.empty()) return {};
  return makeError(Errc::InvalidConfig,
                   changedField(written, c) + " \u2014 " + what + "'s checkpoint cannot continue on it: " + mismatch +
                       " (" + c.model.name + " on " + info.name + ": " + std::to_string(info.num_classes) +
                       " classes, " + std::to_string(info.channels) + " channel(s), " + std::to_string(imageSize) +
                       " px); a resume continues those weights, so it needs the same classes, channels and image "
                       "size: start a new run instead");
}

}  // namespace wb::train
