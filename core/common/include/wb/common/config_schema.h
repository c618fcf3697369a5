#pragma once
// The config's option schema, once: every field's dotted path and member (visitFields), and for each
// its label, help and, for a bounded number, its range. validate() (config.cpp) checks the ranges,
// the window's spin boxes (ui/setup) take their bounds from them, `workbench-cli run --print-schema`
// prints the whole schema with the defaults. std-only.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "wb/common/choices.h"
#include "wb/common/config.h"

namespace wb {

inline constexpr double kUnbounded = std::numeric_limits<double>::infinity();

// A number field's allowed values: min..max, each end included or not; max may be unbounded.
struct Range {
  double min = -kUnbounded;
  double max = kUnbounded;
  bool min_included = true;
  bool max_included = true;
  bool integer = false;   // an integer field: "1..65536", ">= 1"
  bool contains(double v) const {
    if (std::isnan(v) || (!integer && !std::isfinite(v))) return false;
    return (min_included ? v >= min : v > min) && (max_included ? v <= max : v < max);
  }
  bool bounded() const { return std::isfinite(max); }
  // The validator's words: "in [0, 1)", "in 1..65536", ">= 0", "> 0".
  std::string text() const;
};

// A field's words: its own, or for a speedup's field the speedup table's (wb/common/speedups.h).
struct FieldSpec {
  const char* path;    // "optim.weight_decay"
  const char* label;   // "Weight decay"
  const char* help;    // what it does, one sentence
  Range range;         // numbers only (min == -inf and max == inf: any finite number)
  const char* note;    // after the range or the choices in an error: "(0 = all)"; "" when none
  bool number = false; // a number field (has a range)
  const std::vector<Choice>& (*choices)() = nullptr;  // an enum-like field: its values (wb/common/choices.h)
};

// Every field, in visitFields' order (a test checks the two lists agree).
const std::vector<FieldSpec>& configSchema();
// The field's spec, or nullptr.
const FieldSpec* findFieldSpec(const std::string& path);

// Single list of every config field: (dotted path, member). Writing, reading, the unknown-key check
// (wb/proto/config_json.h) and the range checks (validate) loop over it, so a field added to
// wb::Config is added here once, and its spec in configSchema().
template <class C, class V>
void visitFields(C& c, V&& v) {
  v("name", c.name);
  v("seed", c.seed);
  v("data.dataset", c.data.dataset);
  v("data.limit_train", c.data.limit_train);
  v("data.limit_val", c.data.limit_val);
  v("data.val_fraction", c.data.val_fraction);
  v("data.image_size", c.data.image_size);
  v("data.max_bad_fraction", c.data.max_bad_fraction);
  v("data.cache_dir", c.data.cache_dir);
  v("data.augment.crop_padding", c.data.augment.crop_padding);
  v("data.augment.hflip", c.data.augment.hflip);
  v("data.augment.normalize", c.data.augment.normalize);
  v("model.name", c.model.name);
  v("optim.name", c.optim.name);
  v("optim.lr", c.optim.lr);
  v("optim.momentum", c.optim.momentum);
  v("optim.nesterov", c.optim.nesterov);
  v("optim.weight_decay", c.optim.weight_decay);
  v("optim.schedule", c.optim.schedule);
  v("optim.warmup_fraction", c.optim.warmup_fraction);
  v("optim.step_size", c.optim.step_size);
  v("optim.gamma", c.optim.gamma);
  v("optim.lr_scaling", c.optim.lr_scaling);
  v("optim.lr_scaling_warmup", c.optim.lr_scaling_warmup);
  v("optim.lr_base_batch", c.optim.lr_base_batch);
  v("train.epochs", c.train.epochs);
  v("train.max_steps", c.train.max_steps);
  v("train.batch_size", c.train.batch_size);
  v("train.eval_batch_size", c.train.eval_batch_size);
  v("train.log_every", c.train.log_every);
  v("train.threads", c.train.threads);
  v("train.stop_at_accuracy", c.train.stop_at_accuracy);
  v("train.eval_every_steps", c.train.eval_every_steps);
  v("speedups.workers", c.speedups.workers);
  v("speedups.pin_memory", c.speedups.pin_memory);
  v("speedups.devices", c.speedups.devices);
  v("speedups.precision", c.speedups.precision);
  v("speedups.early_stopping.patience", c.speedups.early_stopping.patience);
  v("speedups.early_stopping.monitor", c.speedups.early_stopping.monitor);
  v("speedups.early_stopping.mode", c.speedups.early_stopping.mode);
  v("speedups.early_stopping.min_delta", c.speedups.early_stopping.min_delta);
  v("speedups.early_stopping.check_finite", c.speedups.early_stopping.check_finite);
  v("speedups.early_stopping.stopping_threshold", c.speedups.early_stopping.stopping_threshold);
  v("speedups.sharding", c.speedups.sharding);
  v("speedups.inference_eval", c.speedups.inference_eval);
  v("speedups.decoded_cache", c.speedups.decoded_cache);
  v("speedups.channels_last", c.speedups.channels_last);
  v("speedups.fused_optimizer", c.speedups.fused_optimizer);
  v("speedups.grad_accumulation", c.speedups.grad_accumulation);
  v("speedups.cudnn_benchmark", c.speedups.cudnn_benchmark);
  v("speedups.tf32", c.speedups.tf32);
}

}  // namespace wb
