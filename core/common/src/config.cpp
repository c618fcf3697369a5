#include "wb/common/config.h"

#include "wb/common/config_ranges.h"

#include <cmath>

#include "wb/common/choices.h"
#include <sstream>

namespace wb {

Config speedupsOff(Config c) {
  c.speedups.workers = 0;
  c.speedups.pin_memory = false;
  c.speedups.devices = 1;
  c.speedups.precision = choice::kFp32;
  c.speedups.early_stopping.patience = 0;
  c.speedups.sharding = "off";
  c.speedups.inference_eval = false;
  return c;
}
namespace {

template <class T>
std::string str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
std::string quoted(const std::string& v) { return "\"" + v + "\""; }

bool oneOf(const std::string& v, const std::vector<Choice>& allowed) { return findChoice(allowed, v) != nullptr; }

std::string list(const std::vector<Choice>& allowed) { return "one of " + choiceValues(allowed); }

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// "fashion-mnist" itself, or <kind>:<dir> with a directory.
bool datasetSpecOk(const std::string& spec) {
  const auto& kinds = datasetKinds();
  if (spec == kinds.front().value) return true;
  for (size_t i = 1; i < kinds.size(); ++i) {
    const std::string prefix = std::string(kinds[i].value) + ":";
    if (startsWith(spec, prefix.c_str()) && spec.size() > prefix.size()) return true;
  }
  return false;
}

// "fashion-mnist | idx:<dir> | cifar10:<dir> | folder:<dir>"
std::string datasetSpecs() {
  const auto& kinds = datasetKinds();
  std::string out = kinds.front().value;
  for (size_t i = 1; i < kinds.size(); ++i) out += std::string(" | ") + kinds[i].value + ":<dir>";
  return out;
}

}  // namespace

std::string FieldError::str() const { return path + ": " + value + " \u2014 " + allowed; }

std::string formatFieldErrors(const std::vector<FieldError>& errors) {
  std::string out;
  for (const auto& e : errors) {
    if (!out.empty()) out += "\n";
    out += e.str();
  }
  return out;
}

std::vector<FieldError> validate(const Config& c) {
  std::vector<FieldError> e;
  auto add = [&](std::string path, std::string value, std::string allowed) {
    e.push_back({std::move(path), std::move(value), std::move(allowed)});
  };

  if (c.name.empty()) add("name", "\"\"", "must not be empty");

  const auto& d = c.data;
  if (!datasetSpecOk(d.dataset))
    add("data.dataset", quoted(d.dataset), "must be " + datasetSpecs() + " (e.g. MNIST as idx:<dir>)");
  if (d.limit_train < 0) add("data.limit_train", str(d.limit_train), "must be >= 0 (0 = all)");
  if (d.limit_val < 0) add("data.limit_val", str(d.limit_val), "must be >= 0 (0 = all)");
  if (!(d.val_fraction >= 0.0 && d.val_fraction < 1.0))
    add("data.val_fraction", str(d.val_fraction), "must be in [0, 1) (0 = use the test split)");
  if (d.image_size < 0 || d.image_size > 1024)
    add("data.image_size", str(d.image_size), "must be 0 (native) or 1..1024");
  if (d.augment.crop_padding < 0 || d.augment.crop_padding > 64)
    add("data.augment.crop_padding", str(d.augment.crop_padding), "must be in 0..64");
  if (!(d.max_bad_fraction >= 0.0 && d.max_bad_fraction <= 1.0))
    add("data.max_bad_fraction", str(d.max_bad_fraction), "must be in [0, 1]");

  const std::string& m = c.model.name;
  if (!(oneOf(m, modelChoices()) || (startsWith(m, "torchscript:") && m.size() > 12)))
    add("model.name", quoted(m), "must be " + list(modelChoices()) + ", torchscript:<file.pt>");
  const auto& o = c.optim;
  if (!oneOf(o.name, optimizerChoices())) add("optim.name", quoted(o.name), list(optimizerChoices()));
  if (!(o.lr > 0.0) || !std::isfinite(o.lr)) add("optim.lr", str(o.lr), "must be > 0");
  if (!range::kMomentum.contains(o.momentum))
    add("optim.momentum", str(o.momentum), "must be in " + range::kMomentum.text());
  if (o.nesterov && !(o.momentum > 0.0))
    add("optim.nesterov", "true", "needs optim.momentum > 0");
  if (!(o.weight_decay >= 0.0)) add("optim.weight_decay", str(o.weight_decay), "must be >= 0");
  if (!oneOf(o.schedule, scheduleChoices())) add("optim.schedule", quoted(o.schedule), list(scheduleChoices()));
  if (!range::kWarmupFraction.contains(o.warmup_fraction))
    add("optim.warmup_fraction", str(o.warmup_fraction), "must be in " + range::kWarmupFraction.text());
  if (o.step_size < 1) add("optim.step_size", str(o.step_size), "must be >= 1");
  if (!(o.gamma > 0.0 && o.gamma <= 1.0)) add("optim.gamma", str(o.gamma), "must be in (0, 1]");
  if (!oneOf(o.lr_scaling, lrScalingChoices()))
    add("optim.lr_scaling", quoted(o.lr_scaling), list(lrScalingChoices()) + " (lr × devices, × sqrt(devices))");
  if (!range::kLrScalingWarmup.contains(o.lr_scaling_warmup))
    add("optim.lr_scaling_warmup", str(o.lr_scaling_warmup),
        "must be in " + range::kLrScalingWarmup.text() + " (share of the steps)");
  if (o.lr_base_batch < 0) add("optim.lr_base_batch", str(o.lr_base_batch), "must be >= 0 (0: train.batch_size)");

  const auto& t = c.train;
  if (t.epochs < 1) add("train.epochs", str(t.epochs), "must be >= 1");
  if (t.max_steps < 0) add("train.max_steps", str(t.max_steps), "must be >= 0 (0 = no cap)");
  if (t.batch_size < 1 || t.batch_size > 65536) add("train.batch_size", str(t.batch_size), "must be in 1..65536");
  if (t.eval_batch_size < 1 || t.eval_batch_size > 65536)
    add("train.eval_batch_size", str(t.eval_batch_size), "must be in 1..65536");
  if (t.log_every < 1) add("train.log_every", str(t.log_every), "must be >= 1");
  if (t.threads < 0 || t.threads > 1024) add("train.threads", str(t.threads), "must be 0 (auto) or 1..1024");

  const auto& s = c.speedups;
  if (s.workers < 0 || s.workers > 256) add("speedups.workers", str(s.workers), "must be in 0..256");
  if (s.devices < 1 || s.devices > 1024) add("speedups.devices", str(s.devices), "must be in 1..1024");
  if (!oneOf(s.precision, precisionChoices()))
    add("speedups.precision", quoted(s.precision), list(precisionChoices()));
  if (!oneOf(s.sharding, shardingChoices())) add("speedups.sharding", quoted(s.sharding), list(shardingChoices()));
  if (s.sharding != "off" && s.devices < 2)
    add("speedups.sharding", quoted(s.sharding), "needs speedups.devices >= 2 (sharding splits state across ranks)");
  const auto& es = s.early_stopping;
  if (es.patience < 0) add("speedups.early_stopping.patience", str(es.patience), "must be >= 0 (0 = off)");
  if (!oneOf(es.monitor, monitorChoices()))
    add("speedups.early_stopping.monitor", quoted(es.monitor), list(monitorChoices()));
  if (!oneOf(es.mode, modeChoices())) add("speedups.early_stopping.mode", quoted(es.mode), list(modeChoices()));
  if (!(es.min_delta >= 0.0)) add("speedups.early_stopping.min_delta", str(es.min_delta), "must be >= 0");
  if (!std::isfinite(es.stopping_threshold))
    add("speedups.early_stopping.stopping_threshold", str(es.stopping_threshold), "must be finite (0 = none)");
  return e;
}

}  // namespace wb
