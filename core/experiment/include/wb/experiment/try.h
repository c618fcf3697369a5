#pragma once
// `try`: one variant against its baseline, as pairs through the runner (paired_runner.h) — what
// the window's "Try vs baseline" runs. Its folder holds pairs.json, runs/ and try.json (written
// after each pair and at the end): wb/proto/try_record.h.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/experiment/paired_runner.h"
#include "wb/proto/try_record.h"
#include "wb/render/table.h"

namespace wb::experiment {

struct TryOptions {
  Config baseline, variant;
  std::string speedup;      // the speedup's key ("precision"), or ""
  std::string setting;      // what the variant changes, in words
  std::filesystem::path out;
  Policy policy;
  UserCommand user_command;  // set: each run is the user's command
  // Set: the variant's runs are this instead (an empty text: the workbench's own), e.g. the
  // baseline's training written in Lightning; the comparison is then of whole pipelines.
  std::optional<UserCommand> variant_command;
  // Whole runs: the experiment's reference runs already stored (storedReferenceRuns), read before
  // the try starts: their target is the try's (tryTarget). By parts reads them itself.
  std::vector<records::RunRecord> reference_runs;
  std::string method_reason;  // why this method measures it (try.json's method_reason)
};

// One try, one target, whichever method measures it: the user's (--target-acc); else the fair
// target (compare::fairTargetOf: the lowest best less its chance spread) of the experiment's
// reference runs, those a try by parts trains against (each its own seed); else, whole runs of an
// experiment with no reference runs yet, that of the pairs' baseline runs (each pair its own seed,
// as the reference runs). `source` says which, in words, for the record and the table.
struct TryTarget {
  std::optional<compare::FairTarget> target;
  std::string source;  // "your target" | "the experiment's 5 reference runs" | "the baseline's runs of 3 pairs" | ""
  std::optional<double> acc() const { return target ? std::optional<double>(target->acc) : std::nullopt; }
  // "71.40 % (the baseline's best 72.10 % less 0.70 points: ...), from the experiment's 5 reference runs"
  std::string describe() const;
};
// `pairs`: the whole runs so far (nullptr by parts).
TryTarget tryTarget(std::optional<double> user, const std::vector<records::RunRecord>& references, const Outcome* pairs);

struct TryResult {
  Outcome outcome;
  nlohmann::json doc;       // try.json
  PairEstimates estimates;
  int exitCode() const { return outcome.exitCode(); }
};

// Runs (or continues) the try in options.out. Errors as runPairs. A try.json that cannot be read
// is kept aside and said first (keepUnreadableResult).
Result<TryResult> runTry(const TryOptions& options, const Hooks& hooks);

// try.json of the outcome so far (the record, and as written).
proto::TryRecord tryRecordOf(const TryOptions& options, const Outcome& outcome, const std::string& status);
nlohmann::json tryJson(const TryOptions& options, const Outcome& outcome, const std::string& status);

// The try's answer in one sentence, from its record alone: what to do, by how much (with its
// interval), how sure and why ("Turn on channels-last: 1.10× faster to 71.4 % val acc (95 %:
// 1.04-1.17×); it keeps the training's math, so this is its throughput."), or why there is none
// yet and what would settle it. try.json stores it ("answer"); every surface prints that string.
std::string tryAnswer(const proto::TryRecord& record);
// The short table `try` prints under the answer: what changed, the decision, × to the target with
// its interval (and, by parts, the throughput's).
render::Table tryAnswerTable(const proto::TryRecord& record);

// Rows: time to the target, train samples/s, wall time (the training loop); columns: the
// baseline's and the variant's medians over the counted pairs, the speedup with its interval and
// verdict. Notes: the pairs, their order, the noise band; an A/A check says so.
render::Table tryTable(const nlohmann::json& tryDoc);

// A try started from configs (the window's Try vs baseline): a new folder under `runsRoot`,
// <timestamp>-try-<key>, holding the two configs `try --config … --variant-config …` reads
// (baseline.config.json, variant.config.json). Io naming the folder when it cannot be written.
struct TryInputs {
  std::filesystem::path out, baseline_config, variant_config;
};
Result<TryInputs> writeTryInputs(const std::filesystem::path& runsRoot, const std::string& key,
                                 const nlohmann::json& baseline, const nlohmann::json& variant);
// The try's two configs in its folder (baseline.config.json, variant.config.json: what the window's
// Use loads), written when absent, whichever method runs it; the variant's left out when it is a
// command. InvalidConfig naming the file when one there holds another config.
Status keepTryInputs(const TryOptions& options);
// Whether `out` may be a try's folder: new, empty, a try to continue (its pairs or parts), or
// holding nothing but the try's own input configs (`inputs`, or the two keepTryInputs names).
bool usableTryFolder(const std::filesystem::path& out, const std::vector<std::filesystem::path>& inputs);

}  // namespace wb::experiment
