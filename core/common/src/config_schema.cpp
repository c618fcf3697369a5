#include "wb/common/config_schema.h"

#include <cstdio>

#include "wb/common/speedups.h"

namespace wb {
namespace {

std::string numText(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

Range intIn(double min, double max) { return {min, max, true, true, true}; }
Range intFrom(double min) { return {min, kUnbounded, true, true, true}; }
Range realIn(double min, double max, bool maxIncluded) { return {min, max, true, maxIncluded, false}; }
Range realFrom(double min, bool minIncluded = true) { return {min, kUnbounded, minIncluded, true, false}; }
Range anyFinite() { return {}; }

FieldSpec number(const char* path, const char* label, const char* help, Range r, const char* note = "") {
  return {path, label, help, r, note, true, nullptr};
}
FieldSpec other(const char* path, const char* label, const char* help) { return {path, label, help, {}, "", false, nullptr}; }
FieldSpec oneOf(const char* path, const char* label, const char* help, const std::vector<Choice>& (*choices)(),
                const char* note = "") {
  return {path, label, help, {}, note, false, choices};
}

// A speedup's field in the speedup table's words.
FieldSpec speedupField(FieldSpec f) {
  for (const Speedup& s : speedupTable())
    if (std::string(f.path) == s.config_path) f.label = s.label, f.help = s.help;
  return f;
}

std::vector<FieldSpec> makeSchema() {
  return {
      other("name", "Name", "the experiment's name, shown in run lists and tables"),
      number("seed", "Seed", "seeds the model's initial weights, the data order and augmentation", intFrom(0)),
      other("data.dataset", "Dataset", "the built-in Fashion-MNIST, or a kind and a folder (<kind>:<dir>)"),
      number("data.limit_train", "Train samples", "train on the first N samples only", intFrom(0), "(0 = all)"),
      number("data.limit_val", "Validation samples", "evaluate on the first N samples only", intFrom(0), "(0 = all)"),
      number("data.val_fraction", "Held-out fraction", "hold out this share of the training set for validation",
             realIn(0, 1, false), "(0 = use the test split)"),
      number("data.image_size", "Image size", "resize images to N×N pixels", intIn(0, 1024), "(0 = native)"),
      number("data.max_bad_fraction", "Unreadable samples allowed", "fail past this share of unreadable samples",
             realIn(0, 1, true)),
      other("data.cache_dir", "Cache folder", "where the decoded-sample cache keeps its files (empty: the user's cache folder)"),
      number("data.augment.crop_padding", "Random crop padding", "pad by N pixels and crop back at random", intIn(0, 64)),
      other("data.augment.hflip", "Horizontal flip", "flip training images left-right at random"),
      other("data.augment.normalize", "Normalise", "subtract the dataset's mean and divide by its deviation"),
      other("model.name", "Model", "a built-in model, or torchscript:<file.pt>"),
      oneOf("optim.name", "Optimiser", "the optimiser", optimizerChoices),
      number("optim.lr", "Learning rate", "the step size of the optimiser", realFrom(0, false)),
      number("optim.momentum", "Momentum", "SGD's momentum (Adam's beta1)", realIn(0, 1, false)),
      other("optim.nesterov", "Nesterov", "Nesterov momentum (SGD)"),
      number("optim.weight_decay", "Weight decay", "L2 penalty (decoupled for AdamW)", realFrom(0)),
      oneOf("optim.schedule", "Schedule", "how the learning rate changes over the run", scheduleChoices),
      number("optim.warmup_fraction", "Warm-up", "share of the steps the learning rate warms up over (cosine, onecycle)",
             realIn(0, 1, false)),
      number("optim.step_size", "Step size", "epochs between decays (schedule step)", intFrom(1)),
      number("optim.gamma", "Decay factor", "the learning rate's factor at each decay (schedule step)",
             Range{0, 1, false, true, false}),
      oneOf("optim.lr_scaling", "Scale the lr", "scale the learning rate with the global batch", lrScalingChoices,
            "(lr × devices, × sqrt(devices))"),
      number("optim.lr_scaling_warmup", "Scaled lr warm-up", "share of the steps a scaled learning rate warms up over",
             realIn(0, 1, false), "(share of the steps)"),
      number("optim.lr_base_batch", "Base batch", "the per-rank batch the learning rate was tuned for", intFrom(0),
             "(0: train.batch_size)"),
      // A million passes is past any experiment here; more is a typo that would run for years.
      number("train.epochs", "Epochs", "passes over the training set", intIn(1, 1000000)),
      number("train.max_steps", "Max steps", "stop after this many steps", intFrom(0), "(0 = no cap)"),
      number("train.batch_size", "Batch size", "samples per step on each rank", intIn(1, 65536)),
      number("train.eval_batch_size", "Evaluation batch", "samples per batch when evaluating", intIn(1, 65536)),
      number("train.log_every", "Log every", "steps between step events", intFrom(1)),
      number("train.threads", "Threads", "intra-op threads per process", intIn(0, 1024), "(0 = auto)"),
      number("train.stop_at_accuracy", "Stop at accuracy",
             "train to target: stop right after the first evaluation whose validation accuracy reaches this; "
             "epochs and max steps cap the run",
             realIn(0, 1, true), "(0 = off; a fraction: 0.85 is 85 %)"),
      number("train.eval_every_steps", "Evaluate every", "evaluate every N training steps as well as after each epoch",
             intFrom(0), "(0 = after each epoch only)"),
      speedupField(number("speedups.workers", "", "", intIn(0, 256))),
      speedupField(other("speedups.pin_memory", "", "")),
      speedupField(number("speedups.devices", "", "", intIn(1, 1024))),
      speedupField(oneOf("speedups.precision", "", "", precisionChoices)),
      speedupField(number("speedups.early_stopping.patience", "", "", intFrom(0), "(0 = off)")),
      oneOf("speedups.early_stopping.monitor", "Monitor", "the metric early stopping watches", monitorChoices),
      oneOf("speedups.early_stopping.mode", "Mode", "whether the monitor should fall or rise", modeChoices),
      number("speedups.early_stopping.min_delta", "Min delta", "the least change that counts as an improvement",
             realFrom(0)),
      other("speedups.early_stopping.check_finite", "Stop on non-finite", "stop when the monitor is NaN or infinite"),
      number("speedups.early_stopping.stopping_threshold", "Stop at", "stop once the monitor is better than this",
             anyFinite(), "(0 = none)"),
      speedupField(oneOf("speedups.sharding", "", "", shardingChoices)),
      speedupField(other("speedups.inference_eval", "", "")),
      speedupField(oneOf("speedups.decoded_cache", "", "", decodedCacheChoices)),
      speedupField(other("speedups.channels_last", "", "")),
      speedupField(other("speedups.fused_optimizer", "", "")),
      speedupField(number("speedups.grad_accumulation", "", "", intIn(1, 1024), "(1 = off)")),
      speedupField(other("speedups.cudnn_benchmark", "", "")),
      speedupField(other("speedups.tf32", "", "")),
  };
}

}  // namespace

std::string Range::text() const {
  const std::string lo = numText(min), hi = numText(max);
  if (integer) return bounded() ? "in " + lo + ".." + hi : std::string(min_included ? ">= " : "> ") + lo;
  if (!std::isfinite(min) && !bounded()) return "finite";
  if (!bounded()) return std::string(min_included ? ">= " : "> ") + lo;
  return "in " + std::string(min_included ? "[" : "(") + lo + ", " + hi + (max_included ? "]" : ")");
}

const std::vector<FieldSpec>& configSchema() {
  static const std::vector<FieldSpec> schema = makeSchema();
  return schema;
}

const FieldSpec* findFieldSpec(const std::string& path) {
  for (const FieldSpec& f : configSchema())
    if (path == f.path) return &f;
  return nullptr;
}

}  // namespace wb
