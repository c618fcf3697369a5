#pragma once
// The experiment config: the user-facing contract (docs/runs.md "Config"). Every field has a default.
// JSON (de)serialisation lives in core/proto (wb/proto/config_json.h); this header is std-only.
#include <cstdint>
#include <string>
#include <vector>

namespace wb {

struct AugmentConfig {
  int crop_padding = 0;
  bool hflip = false;
  bool normalize = true;
};

struct DataConfig {
  std::string dataset = "fashion-mnist";  // fashion-mnist | idx:<dir> | cifar10:<dir> | folder:<dir>
  int64_t limit_train = 0;                // 0 = all
  int64_t limit_val = 0;
  double val_fraction = 0.0;              // 0 = use the dataset's test split
  int image_size = 0;                     // 0 = the dataset's own size
  AugmentConfig augment;
  double max_bad_fraction = 0.01;         // fail past this fraction of unreadable samples
  std::string cache_dir;                  // speedups.decoded_cache = disk: where its files go ("" = the user's cache folder)
};

struct ModelConfig {
  std::string name = "lenet";             // lenet | mnist-cnn | mlp | resnet18 | torchscript:<file.pt>
};

struct OptimConfig {
  std::string name = "sgd";               // sgd | adam | adamw | adadelta
  double lr = 0.01;
  double momentum = 0.5;
  bool nesterov = false;
  double weight_decay = 0.0;
  std::string schedule = "constant";      // constant | step | cosine | onecycle
  double warmup_fraction = 0.0;           // share of steps used for linear warm-up (cosine, onecycle)
  int step_size = 1;                      // epochs between decays (schedule = step)
  double gamma = 0.1;                     // decay factor (schedule = step)
  std::string lr_scaling = "none";        // none | linear | sqrt: lr × devices or × sqrt(devices) (wb/common/lr_scaling.h)
  double lr_scaling_warmup = 0.05;        // share of steps over which a scaled lr is warmed up to
  int lr_base_batch = 0;                  // the per-rank batch optim.lr was tuned for; 0 = train.batch_size
                                          // (lr_scaling then also scales for batch_size / lr_base_batch)
};

struct TrainConfig {
  int epochs = 1;
  int64_t max_steps = 0;                  // 0 = no cap
  int batch_size = 64;                    // per rank
  int eval_batch_size = 256;             // measured (bench_e2e): as fast as 64 and 1000 on lenet, 75 MiB below 1000's peak
  int log_every = 50;
  int threads = 0;                        // intra-op threads; 0 = default (see resolveThreads)
  double stop_at_accuracy = 0.0;          // train to target: stop after the first evaluation with val_acc >= this (0 = off)
  int64_t eval_every_steps = 0;           // evaluate every N steps too (0 = each epoch only)
};

struct EarlyStoppingConfig {
  int patience = 0;                       // in evaluations; 0 = off
  std::string monitor = "val_loss";       // val_loss | val_acc
  std::string mode = "min";               // min | max
  double min_delta = 0.0;
  bool check_finite = true;
  double stopping_threshold = 0.0;        // 0 = none; stop once the monitor is better than this
};

struct SpeedupsConfig {
  int workers = 0;
  bool pin_memory = false;
  int devices = 1;
  std::string precision = "32-true";      // 32-true | bf16-mixed | 16-mixed
  EarlyStoppingConfig early_stopping;
  std::string sharding = "off";           // off | zero1 | zero2
  bool inference_eval = true;
  // The levers beyond the recipe (wb/common/speedups.h says what each does); all off by default.
  std::string decoded_cache = "off";      // off | memory | disk: decode each image once
  bool channels_last = false;             // NHWC weights and inputs
  bool fused_optimizer = false;           // multi-tensor (_foreach) optimiser steps
  int grad_accumulation = 1;              // micro-batches per optimiser step (1 = off)
  bool cudnn_benchmark = false;           // CUDA: cuDNN autotune
  bool tf32 = false;                      // CUDA: TF32 matmuls and convolutions
};

struct Config {
  std::string name = "fashion-mnist-lenet";
  uint64_t seed = 1;
  DataConfig data;
  ModelConfig model;
  OptimConfig optim;
  TrainConfig train;
  SpeedupsConfig speedups;
};

// `c` with every speedup off: workers 0, pin memory off, 1 device, 32-true, no early stopping,
// no sharding, grad-enabled evaluation. The ladder's baseline and the window's first experiment
// (a fair first baseline); Config{} itself keeps inference-mode eval on.
Config speedupsOff(Config c);

// One bad field: "optim.lr: -1 — must be > 0".
struct FieldError {
  std::string path;
  std::string value;
  std::string allowed;
  std::string str() const;  // "Epochs (train.epochs): 0 — must be in 1..1000000": label, key, value, rule
};

// Every semantic problem at once (type problems are found by the JSON parser in core/proto).
std::vector<FieldError> validate(const Config& config);

// Joins errors one per line.
std::string formatFieldErrors(const std::vector<FieldError>& errors);

}  // namespace wb
