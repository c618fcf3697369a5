#pragma once
// The speedups, once: the recipe's seven and the levers past it. Their keys (the start event's
// speedups.<key>, `capabilities`' speedups.<key>, the ladder's steps, the measured effects), labels,
// config fields, when each is available and what it needs, what each does to a config and to the
// training's math, its value on this machine, how it is timed, searched, named and handed over.
// capabilities, the trainer's start event, the ladder plan, tune, run names, the effects, the
// window's Speedups group and the CLI's help read this table; no other code branches on a key.
// std-only.
#include <string>
#include <utility>
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
  Evaluation,  // only the evaluation changes: its time from evaluations interleaved in one process
  Replay,      // only where the run ends changes: replayed on the reference runs' evaluations
};

// What this machine offers the speedups: the facts a descriptor's rules read. Whoever plans fills
// it (wb/ladder from `capabilities` and the stored worker probe), so no code outside the table
// branches on a speedup's key to find its value here.
struct Here {
  bool cuda = false;
  int cores = 1;
  int devices = 2;                 // the devices a run may use here: the GPUs, else CPU processes
  int workers = 0;                 // loader workers for this experiment here
  bool workers_measured = false;   // from the worker probe (then 0 means 0 is the fastest)
  std::string workers_source;      // where that count comes from, in words
  std::string mixed_precision;     // the mixed precision this machine runs: 16-mixed on CUDA, else bf16-mixed
};

// How `tune` searches it (wb/tune/tune.h).
enum class Search {
  Dimension,    // a dimension of its own: off, the ladder's value and the config's own
  WithDevices,  // rides on the devices' dimension (it needs devices > 1)
  Evaluation,   // in the evaluation sweep, with the evaluation batch
  OneAtATime,   // one option on top of the rest, when asked (--only ...,levers)
  Never,        // not searched: `why` says why
};

// A setting in PyTorch Lightning's terms (tune's best-lightning.py).
struct LightningSetting {
  std::vector<std::string> trainer;  // Trainer keywords: precision="bf16-mixed"
  std::vector<std::string> loader;   // DataLoader keywords: num_workers=2
  std::string comment;               // where Lightning has no keyword for it: what to write instead
};

// A field the window shows behind a speedup's "More" button, in the window's words.
struct SubField {
  const char* path;   // "speedups.early_stopping.min_delta"
  const char* label;  // "Min. improvement"
};

// A field the window derives from another (early stopping's mode follows its monitor): written
// with the value `value` gives the other's, its errors shown at the other.
struct Follows {
  const char* path;
  const char* from;
  std::string (*value)(const std::string& from);
};

// The window's control for it (ui/setup/speedups_group.h), past what its field's schema gives
// (a combo box of the choices, a spin box with the range, else a check box).
struct Control {
  const char* zero = "";        // a count's words for 0: "off"
  const char* suffix = "";      // after a count: " evals"
  bool probe = false;           // `workbench-cli probe workers` measures its best value: a Probe button
  std::vector<SubField> more;   // behind its "More" button (tooltip `more_tip`)
  const char* more_tip = "";
  std::vector<Follows> follows;
  // The words after the label for `capabilities`' kind of it ({"gpus", "GPUs"}).
  std::vector<std::pair<std::string, std::string>> kinds;
  // What `c`'s other settings leave it waiting for, and what to set ("" when nothing).
  std::string (*waits)(const Config& c) = nullptr;
  // A warning under its row for `c`, and what to set ("" when none): early stopping that cannot
  // stop this experiment.
  std::string (*caveat)(const Config& c) = nullptr;
};

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

  // The ladder's and tune's value on this machine; why it cannot help `c` here ("" when it can);
  // what its measurement should be read with ("" when nothing); the ladder's step in words, from
  // `from` to `to` (nullptr: `to`'s setting).
  void (*on)(Config&, const Here&) = nullptr;
  std::string (*cannotHelp)(const Config& c, const Here&) = nullptr;
  std::string (*caveat)(const Config& c, const Here&) = nullptr;
  std::string (*step)(const Config& from, const Config& to, const Here&) = nullptr;
  // `capabilities`' note for it on this machine (nullptr: `help`, or what it needs without it).
  std::string (*note)(const Here&) = nullptr;
  // A run's short name for a config that differs from its baseline in this field ("+ bf16");
  // nullptr: the setting.
  std::string (*name)(const Config&) = nullptr;
  Search search = Search::OneAtATime;
  const char* why = "";      // Search::Never: why a search leaves it out
  // The hand-over (tune's best-torchrun.sh and best-lightning.py): `c`'s setting as a line of a
  // PyTorch script ("" when there is nothing to write) and in Lightning's terms.
  std::string (*pytorch)(const Config& c) = nullptr;
  LightningSetting (*lightning)(const Config& c) = nullptr;
  // It acts in the evaluation too (the evaluation's loader, the model's layout, its kernels or
  // precision): a try by parts of a lever that keeps the math times the evaluation as well, the
  // lever's way (a math-changing one's evaluation is its runs to the target's own).
  bool in_evaluation = false;
  // It sets how many cores a run takes (loader threads, processes): two runs that differ in it
  // load the host differently, so contention cannot be compared between them.
  bool uses_cores = false;
  Control control;           // how the window shows it
};

// "keeps the math" / "changes the math", for tables and messages.
const char* mathWords(Math m);

// The patience the recipe (and the ladder) gives early stopping, in evaluations.
inline constexpr int kRecipePatience = 2;

// "needs CUDA; <what happens without>" for a NeedsCuda speedup, "" for the others.
std::string withoutWhatItNeeds(const Speedup& s);

// `capabilities`' note for it on a machine like `here` (its `note`, else its help, or what it needs).
std::string noteHere(const Speedup& s, const Here& here);

// Whether `c` asks for it: its setting differs from the baseline's.
bool speedupRequested(const Speedup& s, const Config& c);

// The speedup whose field `path` is or lies under ("speedups.early_stopping.monitor" is early
// stopping's), or nullptr.
const Speedup* speedupOfField(const std::string& path);

// The field that `path` follows (early stopping's mode, its monitor), `path` itself when another
// field follows it, else "": a field and its follower are one change.
std::string leadField(const std::string& path);

// The ladder's step for `s` from `from` to `to`, in words ("loader workers 0 → 2").
std::string stepWords(const Speedup& s, const Config& from, const Config& to, const Here& here);
// A run's short name for `c`'s setting of `s` (its `name`, else its setting).
std::string runName(const Speedup& s, const Config& c);

// In the ladder's and the window's order.
const std::vector<Speedup>& speedupTable();
// The entry of `key`, or nullptr.
const Speedup* findSpeedup(const std::string& key);

}  // namespace wb
