#pragma once
// The seven speedups, once: their keys (the start event's speedups.<key>, `capabilities`'
// speedups.<key>, the ladder's steps, the measured effects), labels, config fields, when each is
// available and what it needs, and what each does to a config: its baseline (off), copying it
// from one config to another, and its setting in words. capabilities, the trainer's start event,
// the ladder plan, the effects, the window's Speedups group and the CLI's help read this table.
// std-only.
#include <string>
#include <vector>

#include "wb/common/config.h"

namespace wb {

namespace speedup {  // the keys, for code that treats one speedup on its own
inline constexpr const char* kWorkers = "workers";
inline constexpr const char* kPinMemory = "pin_memory";
inline constexpr const char* kDevices = "devices";
inline constexpr const char* kPrecision = "precision";
inline constexpr const char* kEarlyStopping = "early_stopping";
inline constexpr const char* kSharding = "sharding";
inline constexpr const char* kInferenceEval = "inference_eval";
inline constexpr const char* kDecodedCache = "decoded_cache";
inline constexpr const char* kChannelsLast = "channels_last";
inline constexpr const char* kFusedOptimizer = "fused_optimizer";
inline constexpr const char* kGradAccumulation = "grad_accumulation";
inline constexpr const char* kCudnnBenchmark = "cudnn_benchmark";
inline constexpr const char* kTf32 = "tf32";
}  // namespace speedup

enum class Availability {
  Always,          // on every machine
  NeedsCuda,       // only with a CUDA device (Speedup::without says what happens without)
  PerChoice,       // by value: the choice's needs_cuda (precisionChoices())
  NeedsDevices,    // only with devices > 1 (the validator refuses it on one)
};

// How the window edits it: a control of its own (the recipe's seven), or one built from its field's
// schema: a check box (a bool), a spin box with the schema's range (a count), a combo box of the
// field's choices.
enum class Control { Own, Toggle, Count, Choice };

struct Speedup {
  const char* key;
  const char* label;         // for people: "Loader workers"
  const char* config_path;   // the field that turns it on: "speedups.workers"
  Availability availability;
  const char* needs;         // what it needs, in words ("" when nothing)
  const char* help;          // one line: what it does
  const char* without;       // NeedsCuda: what happens on a machine without it ("" for the others)
  void (*off)(Config&);                          // sets the baseline's value (speedupsOff)
  void (*copy)(Config& to, const Config& from);  // takes `from`'s setting (and what it needs)
  std::string (*setting)(const Config&);         // "workers 2", "precision bf16-mixed"
  // The levers past the recipe's seven (whose ladder values depend on the machine and live in the
  // ladder's plan) are described whole here: the window's control, the ladder's value, and why the
  // default ladder leaves it off for a config ("" when it can help there).
  Control control = Control::Own;
  void (*on)(Config&) = nullptr;                 // the ladder's and the tune's value
  std::string (*cannotHelp)(const Config&) = nullptr;
};

// "needs CUDA; <what happens without>" for a NeedsCuda speedup, "" for the others.
std::string withoutWhatItNeeds(const Speedup& s);

// Whether `c` asks for it: its setting differs from the baseline's.
bool speedupRequested(const Speedup& s, const Config& c);

// In the ladder's and the window's order.
const std::vector<Speedup>& speedupTable();
// The entry of `key`, or nullptr.
const Speedup* findSpeedup(const std::string& key);

}  // namespace wb
