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

// What it does to the training's arithmetic. A speedup that keeps it changes only how fast the
// steps go; one that changes it changes how many samples the training needs to reach a target
// too, so its samples to target must be measured, not assumed.
enum class Math {
  Keeps,    // the same losses step for step, within fp32 rounding
  Changes,  // other losses, or another point where the run ends
};

// How keeping the math is checked (wb/probe/math_check.h).
enum class MathCheck {
  Steps,     // the first steps' losses with and without it, in one process
  Ranks,     // it needs more than one process: short whole-process trials, not one process
  Stopping,  // it changes where the run ends, not its steps: the steps cannot show it
};

struct MathEffect {
  Math math;
  MathCheck check;
  const char* why;  // in words: why it keeps the math, or what it changes
};

// How a try by parts times it (wb/experiment/composed_try.h): where the change's cost shows and
// the cheapest measurement that sees it.
enum class Timing {
  Segments,    // switches within one running process: interleaved segments (wb/probe/segments.h)
  Trials,      // a process cannot switch it: short interleaved whole-process trials
  Evaluation,  // only the evaluation changes: its time from short trials that evaluate
  Replay,      // only where the run ends changes: replayed on the reference runs' evaluations
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
  MathEffect math;           // whether it keeps the training's math, and how that is checked
  Timing timing;             // how a try by parts times it
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

// "keeps the math" / "changes the math", for tables and messages.
const char* mathWords(Math m);

// "needs CUDA; <what happens without>" for a NeedsCuda speedup, "" for the others.
std::string withoutWhatItNeeds(const Speedup& s);

// Whether `c` asks for it: its setting differs from the baseline's.
bool speedupRequested(const Speedup& s, const Config& c);

// The speedup whose field `path` is or lies under ("speedups.early_stopping.monitor" is early
// stopping's), or nullptr.
const Speedup* speedupOfField(const std::string& path);

// In the ladder's and the window's order.
const std::vector<Speedup>& speedupTable();
// The entry of `key`, or nullptr.
const Speedup* findSpeedup(const std::string& key);

}  // namespace wb
