#include "wb/report/run_names.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <vector>

#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"
#include "wb/proto/config_json.h"

namespace wb::report {
using nlohmann::json;

namespace {

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
  if (!j.is_object()) {
    out.emplace_back(prefix, j);
    return;
  }
  for (auto it = j.begin(); it != j.end(); ++it) flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
}

const json* find(const std::vector<std::pair<std::string, json>>& leaves, const std::string& path) {
  for (const auto& [p, v] : leaves)
    if (p == path) return &v;
  return nullptr;
}

std::string valueText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "on" : "off";
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v.get<double>());
    return buf;
  }
  if (v.is_null()) return "none";
  return v.dump();
}

// A field in the schema's words, its label's first letter lowered ("held-out fraction"); a
// speedup's own field, and one the schema does not know, keep their last key ("workers").
std::string fieldWords(const std::string& path) {
  const FieldSpec* f = speedupOfField(path) ? nullptr : findFieldSpec(path);  // a speedup's own: "workers 2"
  if (f && f->label && *f->label) {
    std::string label = f->label;
    if (label.size() > 1 && std::isupper(static_cast<unsigned char>(label[0])) && !std::isupper(static_cast<unsigned char>(label[1])))
      label[0] = char(std::tolower(static_cast<unsigned char>(label[0])));
    return label;
  }
  const auto dot = path.rfind('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

// "folder:/data/fmnist-png/" → "folder fmnist-png"; "fashion-mnist" stays.
std::string datasetName(const std::string& spec) {
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return spec;
  std::string dir = spec.substr(colon + 1);
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const auto slash = dir.rfind('/');
  const std::string base = slash == std::string::npos ? dir : dir.substr(slash + 1);
  return spec.substr(0, colon) + " " + (base.empty() ? dir : base);
}

// data.limit_train / limit_val: a count of images, 0 = all of them.
std::string imagesName(const json& v, const std::string& split) {
  return v.is_number() && v.get<double>() > 0 ? valueText(v) + " " + split + " images" : "all " + split + " images";
}

// Counts read as words: "3 epochs", "batch 32", "eval batch 1".
std::string countName(const std::string& path, const json& v) {
  if (path == "train.epochs") return valueText(v) + (v == json(1) ? " epoch" : " epochs");
  if (path == "train.batch_size") return "batch " + valueText(v);
  if (path == "train.eval_batch_size") return "eval batch " + valueText(v);
  if (path == "data.limit_train") return imagesName(v, "train");
  if (path == "data.limit_val") return imagesName(v, "val");
  if (path == "data.image_size") return v.is_number() && v.get<double>() > 0 ? valueText(v) + " px" : "native size";
  return {};
}

// A speedup's field, by its descriptor's run name ("+ bf16", "channels-last on"); "" for other fields.
std::string speedupName(const std::string& path, const json& value) {
  for (const Speedup& s : speedupTable()) {
    if (path != s.config_path) continue;
    Config base;
    if (s.availability == Availability::NeedsDevices) base.speedups.devices = 2;  // a config it can be valid in
    json doc = proto::configToJson(base);
    if (!proto::applyOverride(doc, path + "=" + value.dump()).ok()) return {};
    auto config = proto::configFromJson(doc);
    return config.ok() ? runName(s, *config) : std::string();
  }
  return {};
}

}  // namespace

std::string changeName(const std::string& path, const json& value) {
  if (std::string speedup = speedupName(path, value); !speedup.empty()) return speedup;
  if (path == "data.dataset" && value.is_string()) return datasetName(value.get<std::string>());
  if (path == "model.name" && value.is_string()) return value.get<std::string>();
  if (path == "optim.name" && value.is_string()) return value.get<std::string>();
  if (path == "optim.lr") return "lr " + valueText(value);
  if (const std::string lead = leadField(path); !lead.empty()) return fieldWords(lead) + " " + valueText(value);
  if (std::string count = countName(path, value); !count.empty()) return count;
  if (path == "optim.lr_scaling" && value.is_string())
    return value.get<std::string>() == "none" ? "lr not scaled" : "lr scaled " + value.get<std::string>();
  return fieldWords(path) + " " + valueText(value);
}

std::string differenceName(const json& run, const json& reference) {
  if (!run.is_object() || !reference.is_object()) return {};
  std::vector<std::pair<std::string, json>> a, b;
  flatten(reference, "", a);
  flatten(run, "", b);
  std::vector<std::string> parts;
  std::vector<bool> speedupFirst;  // parts[i] names a speedup's field
  std::vector<std::string> leads;  // the fields named with their followers
  for (const auto& [path, value] : b) {
    if (path == "name") continue;
    const json* before = find(a, path);
    if (before && *before == value) continue;
    if (path == proto::kCommandKey) {  // the user's own script in place of the trainer: the words, not the line
      parts.push_back("your script");
      speedupFirst.push_back(true);
      continue;
    }
    // A field and the one that follows it (early stopping's monitor and mode) are one change.
    const std::string lead = leadField(path);
    if (!lead.empty() && std::find(leads.begin(), leads.end(), lead) != leads.end()) continue;
    if (!lead.empty()) leads.push_back(lead);
    const json* named = lead.empty() ? nullptr : find(b, lead);
    parts.push_back(changeName(named ? lead : path, named ? *named : value));
    speedupFirst.push_back(speedupOfField(path) != nullptr);
  }
  // The speedups it changes first (what a person compares runs by), the rest in the config's order.
  std::vector<std::string> ordered;
  for (const bool speedups : {true, false})
    for (size_t i = 0; i < parts.size(); ++i)
      if (speedupFirst[i] == speedups) ordered.push_back(parts[i]);
  parts = std::move(ordered);
  std::string out;
  const int shown = std::min<int>(kNameParts, static_cast<int>(parts.size()));
  for (int i = 0; i < shown; ++i) out += (i ? ", " : "") + parts[size_t(i)];
  if (static_cast<int>(parts.size()) > shown) out += ", +" + std::to_string(parts.size() - size_t(shown)) + " more";
  return out;
}

}  // namespace wb::report
