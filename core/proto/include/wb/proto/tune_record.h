#pragma once
// tune.json and batch.json as types: what `workbench-cli tune` (and `tune batch`) searched, ran and
// found, written after every trial and pair and at the end, read back to continue a cut search
// and by the window. The keys are the field lists in tune_record.cpp (one line a field, like
// summary.json's). Reading is tolerant: a missing key, null or a value of another type keeps the
// member's default; fields the lists do not know are kept in `unknown` and written back.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace wb::proto {

// One value of one searched setting ("speedups.workers" = 2), or why a setting was not searched.
struct TuneDimension {
  std::string key;                   // the config path: "speedups.workers", "train.batch_size"
  std::vector<std::string> values;   // the values tried, as JSON text ("2", "\"bf16-mixed\"")
  std::string note;                  // where the values come from, or why it is not searched
  bool searched = true;
};

// One configuration of the search: the experiment's config with `settings` applied.
struct TuneCandidate {
  std::string id;                    // "c07"; "baseline" is the config as given
  std::string label;                 // "workers 2, batch 128, bf16-mixed"
  nlohmann::json settings = nlohmann::json::object();  // {config path: value}
  nlohmann::json config;             // the whole config it runs (the finals' runs use it as is)
};

// One short run of one candidate (a cheap trial), ranked on the time one epoch would take.
struct TuneTrial {
  std::string candidate;             // the candidate's id
  std::string stage;                 // "eval" (the evaluation settings' sweep) | "halving"
  int rung = 0;                      // the successive-halving round (0: every candidate)
  int64_t steps = 0;                 // training steps it ran (train.max_steps)
  std::string run_dir;
  std::string status;                // the run's: ok | failed | cancelled | ...
  std::optional<double> train_samples_per_s;  // training steps only, after the first log interval
  std::optional<double> eval_images_per_s;    // its evaluation of data.limit_val images
  std::optional<double> epoch_s;     // estimated: train images / train rate + val images / eval rate
  std::optional<int64_t> peak_mem;   // bytes: device peak on CUDA, RSS on the CPU
  std::optional<double> run_wall_s;  // what the trial cost, start-up included
  bool contended = false;            // measured while the machine was busy with other work
  std::string error;
};

struct TuneRung {
  int rung = 0;
  int64_t samples = 0;               // training samples each trial runs at this rung
  std::vector<std::string> candidates;  // ids, in the order they ran
  std::vector<std::string> promoted;    // ids kept for the next rung (or the finals)
  std::string why;                   // the rule: "the fastest third, and any within the noise of it"
};

// A configuration trained to the target as interleaved pairs against the config as given.
struct TuneFinalist {
  std::string candidate;
  std::string label;
  std::string dir;                   // the folder of its runs: finals/runs, or finals-2/runs (a second round);
                                     // by parts: its try's folder, finals/<candidate>
  std::string method;                // "" (pairs of whole runs) | "composed" (by parts: a try's try.json)
  std::string words;                 // by parts: the composed split in words
  int pairs = 0;                     // counted pairs
  bool reached = false;              // reached the target in a counted pair
  nlohmann::json estimate;           // {to_target, throughput, wall} against the config as given
  nlohmann::json vs_best;            // the best's time to target against this one's, per round
  std::string verdict;               // "best" | "cannot be told from the best" | "slower than the best" | why not
};

// One batch size the batch finder ran.
struct BatchPoint {
  int batch = 0;                     // per rank
  std::string run_dir;
  std::string status;
  std::optional<double> train_samples_per_s;
  std::optional<int64_t> peak_mem;
  bool allocation_failed = false;    // the trial ran out of memory: the limit
  std::string error;
};

struct TuneBatch {
  int base = 0;                      // train.batch_size as given
  int chosen = 0;                    // the smallest size within the noise of the fastest it ran
  int devices = 1;                   // ranks: the sizes are per rank
  double margin = 0.1;               // share of the free memory kept free
  std::optional<int64_t> memory_free;  // bytes free when it started (host, or the GPU's)
  std::string memory_kind;           // "host RSS" | "CUDA reserved"
  std::string stopped;               // why it stopped going up
  std::string lr_rule;               // none | linear | sqrt
  std::string lr_note;               // the lr the chosen size trains at, and its warm-up
  std::vector<BatchPoint> points;
  nlohmann::json accuracy;           // the check that accuracy held: {target, reached, best, run_dir}
  nlohmann::json config;             // the config as given: a continue on the folder must start from it
  nlohmann::json unknown = nlohmann::json::object();
};

struct TuneRecord {
  std::string status = "running";    // running | ok | failed | cancelled
  std::string answer;                // the answer in one sentence (wb/tune/tune.h tuneAnswer)
  std::string out_dir;
  std::string measured_at;           // UTC
  std::string command;               // the command line, for "continue with"
  std::string run_command;           // --command: the user's script every run was ("": the workbench's)
  std::string left_out;              // what --command left out of the search, in words
  std::string objective;             // what the trials are ranked on, in words
  std::vector<TuneDimension> space;
  std::vector<TuneCandidate> candidates;  // "baseline" first
  std::vector<TuneTrial> trials;
  std::vector<TuneRung> rungs;
  std::string eval_choice;           // the evaluation sweep's pick (an "e" candidate): its settings join every "c" one
  std::vector<TuneFinalist> finals;
  std::optional<double> target_acc;  // 0..1
  std::string best;                  // the fastest to the target of the finals (a candidate id, or "baseline")
  std::string best_label;
  std::vector<std::string> cannot_tell;  // ids whose time to target cannot be told from the best's
  double budget_s = 0;
  double trials_s = 0;               // what the cheap trials cost (wall, start-ups included)
  double finals_s = 0;               // what the finals cost
  std::string note;                  // the outcome in words
  std::optional<TuneBatch> batch;    // the batch finder's record, when it ran
  nlohmann::json unknown = nlohmann::json::object();
};

nlohmann::json toJson(const TuneRecord& r);
nlohmann::json toJson(const TuneTrial& t);  // one trial (tune's trial_end event)
TuneRecord readTuneRecord(const nlohmann::json& j);
nlohmann::json toJson(const TuneBatch& b);
TuneBatch readTuneBatch(const nlohmann::json& j);

}  // namespace wb::proto
