#include "composed_speed.h"

#include "wb/proto/experiment_events.h"

#include <algorithm>

#include "throughput_trials.h"
#include "wb/experiment/composed_try.h"
#include "wb/common/fs.h"
#include "wb/common/speedups.h"
#include "wb/launch/tool_run.h"
#include "wb/proto/config_json.h"
#include "wb/proto/events.h"
#include "wb/compare/compare.h"
#include "wb/stats/estimate_json.h"
#include "wb/stats/rounds_rule.h"
#include "wb/records/host.h"

namespace wb::experiment::detail {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::optional<Part> partOf(const std::string& path) {
  if (const Speedup* s = speedupOfField(path)) switch (s->timing) {
      case Timing::Segments: return Part::Segments;
      case Timing::Trials: return Part::Trials;
      case Timing::Evaluation: return Part::Evaluation;
      case Timing::Replay: return Part::Replay;
    }
  if (path == "train.batch_size") return Part::Trials;
  if (path == "train.eval_batch_size") return Part::Evaluation;
  static const std::vector<std::string> mathOnly{"optim.lr", "optim.momentum", "optim.nesterov", "optim.weight_decay",
                                                 "optim.schedule", "optim.warmup_fraction", "optim.step_size",
                                                 "optim.gamma", "optim.lr_scaling", "optim.lr_scaling_warmup",
                                                 "optim.lr_base_batch"};
  if (std::find(mathOnly.begin(), mathOnly.end(), path) != mathOnly.end()) return Part::MathOnly;
  return std::nullopt;
}

}  // namespace

Changes changesOf(const TryOptions& o) {
  Changes c;
  for (const auto& change : compare::configDiff(proto::configToJson(o.baseline), proto::configToJson(o.variant))) {
    if (change.path == "name" || change.path == "seed") continue;
    if (auto part = partOf(change.path)) c.parts[*part].push_back(change.path);
    else c.unknown.push_back(change.path);
    if (const Speedup* s = speedupOfField(change.path); s && s->in_evaluation && s->math.math == Math::Keeps)
      c.evaluation_too = true;
  }
  return c;
}

namespace {

// The baseline with the variant's fields of the given parts: what a measurement runs as the
// variant (the training's throughput: its speed fields; the evaluation's: those and its own).
json baselineWith(const TryOptions& o, std::initializer_list<Part> which) {
  json out = proto::configToJson(o.baseline);
  const json v = proto::configToJson(o.variant);
  const Changes c = changesOf(o);
  for (Part part : which)
    if (auto it = c.parts.find(part); it != c.parts.end())
      for (std::string path : it->second) {
        std::replace(path.begin(), path.end(), '.', '/');
        const json::json_pointer ptr("/" + path);
        out[ptr] = v[ptr];
      }
  return out;
}

json throughputVariant(const TryOptions& o) { return baselineWith(o, {Part::Segments, Part::Trials}); }
json evaluationVariant(const TryOptions& o) { return baselineWith(o, {Part::Segments, Part::Trials, Part::Evaluation}); }

const char* const kMeasureAgain = "remove it and the same command measures it again, or give a new --out";

// A record the try kept in its folder: nullopt when there is none yet; an error naming it when it
// cannot be read (cut mid-file, emptied) or is another record than `kind` (another experiment's):
// it is never measured again over it in silence.
Result<std::optional<json>> keptRecord(const fs::path& file, const std::string& kind) {
  proto::StoredRecord r = records::readStored(file);
  if (r.missing()) return std::optional<json>();
  if (r.unreadable()) return proto::unreadableError(file, r.why, kMeasureAgain);
  if (const std::string had = proto::stringOr(r.doc, "kind", ""); had != kind)
    return makeError(Errc::InvalidConfig, file.string() + " holds " + (had.empty() ? "no " + kind + " record" : "a " + had + " record") +
                                              ", not the try's " + kind + " record (another experiment wrote it): " + kMeasureAgain);
  return std::optional<json>(std::move(r.doc));
}

fs::path baselineFile(const TryOptions& o) { return o.out / "parts" / "baseline.json"; }
fs::path variantFile(const TryOptions& o) { return o.out / "parts" / "variant.json"; }
fs::path throughputFile(const TryOptions& o) { return o.out / "parts" / "variant-throughput.json"; }
fs::path evaluationFile(const TryOptions& o) { return o.out / "parts" / "variant-evaluation.json"; }

}  // namespace

Status writeConfigs(const TryOptions& o) {
  std::error_code ec;
  fs::create_directories(o.out / "logs", ec);
  fs::create_directories(o.out / "parts", ec);
  const std::pair<fs::path, json> files[] = {{baselineFile(o), proto::configToJson(o.baseline)},
                                              {variantFile(o), proto::configToJson(o.variant)},
                                              {throughputFile(o), throughputVariant(o)},
                                              {evaluationFile(o), evaluationVariant(o)}};
  for (const auto& [file, doc] : files) {
    const proto::StoredRecord stored = records::readStored(file);
    if (stored.unreadable()) return proto::unreadableError(file, stored.why, "give a new --out, or remove the folder to start again");
    if (stored.read() && stored.doc != doc)
      return makeError(Errc::InvalidConfig, file.string() + " holds another try's config: give a new --out");
    if (auto st = writeFileAtomic(file, doc.dump(2) + "\n"); !st.ok()) return st;
  }
  return {};
}

namespace {

// The kind a kept result's record says (wb/records/speed_record.h, math_record.h).
std::string kindOf(const std::string& name) {
  if (name == "math") return "math-check";
  std::string kind = name;
  std::replace(kind.begin(), kind.end(), '-', ' ');
  return kind;  // "segments", "evaluation segments", "trials", "evaluation trials"
}

// One measuring command's result (`probe <tool>`), kept in the try's folder as <name>.json (name:
// the tool's own by default) and reused when the try continues.
Result<json> measure(const TryOptions& o, const Hooks& h, const std::string& tool, const std::string& what,
                     const fs::path& variant, std::vector<std::string> extra = {}, std::string name = "") {
  if (name.empty()) name = tool;
  const fs::path file = o.out / (name + ".json");
  auto kept = keptRecord(file, kindOf(name));
  if (!kept.ok()) return kept.error();
  if (*kept) {
    if (h.log) std::fprintf(h.log, "%s: kept from %s\n", what.c_str(), file.c_str());
    phase(h, what, 0, 0, true);
    return std::move(**kept);
  }
  if (h.log) std::fprintf(h.log, "%s…%s\n", what.c_str(), progressTime(h).c_str());
  phase(h, what);
  launch::ToolRun r;
  r.program = h.cli_path;
  r.args = {"probe", tool, "--config", baselineFile(o).string(), "--variant-config", variant.string(), "--json"};
  r.args.insert(r.args.end(), extra.begin(), extra.end());
  r.result_file = file;
  r.log_file = o.out / "logs" / (name + ".log");
  r.what = what;
  r.stop = h.stop;
  return launch::runTool(r);
}

// Short whole-process trials (throughput_trials.h), kept in <name>.json and the runner's folder <name>/.
// `keepsMath`: the change keeps the math (else the trials take all their pairs: stats::leastRounds).
// `slowerSettles`: a second pair clearly slower ends them (TrialsOptions::slower_settles).
Result<records::SpeedRecord> measureByTrials(const TryOptions& o, const Hooks& h, bool evaluation, bool keepsMath,
                                            bool slowerSettles = false) {
  const std::string name = evaluation ? "evaluation-trials" : "trials";
  const fs::path file = o.out / (name + ".json");
  const std::string what = evaluation ? "evaluation time (short interleaved trials, whole processes)"
                                      : "training throughput (short interleaved trials, whole processes)";
  auto kept = keptRecord(file, kindOf(name));
  if (!kept.ok()) return kept.error();
  if (*kept) {
    phase(h, what, 0, 0, true);
    return records::speedRecordFromJson(**kept);
  }
  phase(h, what);
  detail::TrialsOptions t;
  t.evaluation = evaluation;
  t.all_pairs = stats::leastRounds(keepsMath, 2, kTrialPairs) >= kTrialPairs;
  t.slower_settles = slowerSettles;
  t.steps = evaluation ? detail::kEvalTrialSteps : detail::kTrialSteps;
  if (h.log)
    std::fprintf(h.log, evaluation ? "evaluation time (short interleaved trials, %lld steps and %d evaluations each)…\n"
                                   : "training throughput (short interleaved trials of %lld steps, whole processes)…\n",
                 static_cast<long long>(t.steps), detail::kEvalTrialEvaluations);
  t.baseline = o.baseline;
  auto variant = proto::configFromJson(evaluation ? evaluationVariant(o) : throughputVariant(o));
  if (!variant.ok()) return variant.error();
  t.variant = *variant;
  t.out = o.out / name;
  t.min_effect = o.policy.min_effect;
  Hooks quiet = h;
  quiet.on_pair = nullptr;
  auto record = detail::measureTrials(t, quiet);
  if (!record.ok()) return record.error();
  if (auto st = writeFileAtomic(file, records::speedRecordJson(*record).dump(2) + "\n"); !st.ok()) return st.error();
  return record;
}

const char* const kMathWhat = "the math check (the first steps' losses from one seed)";

fs::path mathFile(const TryOptions& o) { return o.out / "math.json"; }

bool keepsMath(const std::optional<records::MathCheckRecord>& math) { return math && math->keeps_math; }

// A change one process cannot check (devices, early stopping): its record made here, no process
// started (Hooks::unchecked_math), kept in math.json as `probe math` would write it. False when
// the first steps can show it, or no hook says.
Result<bool> recordUncheckedMath(const TryOptions& o, const Hooks& h, Speed& s) {
  if (!h.unchecked_math) return false;
  auto unchecked = h.unchecked_math(o.baseline, o.variant);
  if (!unchecked.ok()) return unchecked.error();
  if (!*unchecked) return false;
  if (auto st = writeFileAtomic(mathFile(o), records::mathCheckJson(**unchecked).dump(2) + "\n"); !st.ok()) return st.error();
  if (h.log) std::fprintf(h.log, "%s: %s\n", kMathWhat, (*unchecked)->verdict.c_str());
  s.math = std::move(**unchecked);
  return true;
}

// The math check when no segments' process ran it first (trials, an unchanged step, a try
// continued): math.json as it is, else the record of a change one process cannot check, else
// `probe math`.
Status checkMathAlone(const TryOptions& o, const Hooks& h, Speed& s) {
  if (s.math) return {};
  auto kept = keptRecord(mathFile(o), kindOf("math"));
  if (!kept.ok()) return kept.error();
  if (*kept) {
    s.math = records::mathCheckFromJson(**kept);
    return {};
  }
  auto recorded = recordUncheckedMath(o, h, s);
  if (!recorded.ok()) return recorded.error();
  if (*recorded) return {};
  auto math = measure(o, h, "math", kMathWhat, variantFile(o));
  if (!math.ok()) return math.error();
  s.math = records::mathCheckFromJson(*math);
  return {};
}

// The evaluation changes only with a training lever that acts there too (Changes::evaluation_too).
bool evaluationAfterTraining(const Changes& c) { return c.evaluation_too && !c.has(Part::Evaluation); }

fs::path evaluationSegmentsFile(const TryOptions& o) { return o.out / "evaluation-segments.json"; }

// `probe segments` (training steps, or with --evaluation the evaluations): the math check first in
// the same process when `withMath` (math.json, before the first round).
Result<records::SpeedRecord> measureSegments(const TryOptions& o, const Changes& changes, bool futility, const Hooks& h,
                                            bool evaluation, bool withMath,
                                            Speed& s) {
  std::vector<std::string> args{"--min-effect", std::to_string(o.policy.min_effect)};
  if (evaluation) args.insert(args.begin(), "--evaluation");
  if (withMath) args.insert(args.end(), {"--math-check", mathFile(o).string()});  // it takes its rounds by the check
  else if (!evaluation && s.math && !s.math->keeps_math)  // a change of the math: all its rounds (stats::leastRounds)
    args.insert(args.end(), {"--min-rounds", std::to_string(stats::leastRounds(false, stats::kSegmentMinRounds, stats::kSegmentMaxRounds))});
  // The throughput is the whole answer only when the math is kept: else a slower step may still
  // need so many fewer samples that it is faster to the target, and the rounds go on (a probe
  // that checks the math first asks its own check). The evaluation's time is, when the training
  // steps are unchanged: its rounds then stop once it cannot make the time to target faster
  // (the probe weighs it by the evaluations' share of the run).
  const bool whole = evaluation ? s.throughput.unchanged() && (withMath || keepsMath(s.math)) : (withMath || keepsMath(s.math));
  if (futility && whole) args.push_back("--only-faster");
  // An evaluation that changes only with the training's lever is a share of the run: its fewest
  // rounds, their spread carried into the composed interval weighed by that share, timed after the
  // training's rounds in their process (or on its own, for a try continued from before).
  if (evaluationAfterTraining(changes)) {
    const std::vector<std::string> more = evaluation ? std::vector<std::string>{"--max-rounds", std::to_string(stats::kSegmentMinRounds)}
                                                     : std::vector<std::string>{"--evaluation-after", evaluationSegmentsFile(o).string()};
    args.insert(args.end(), more.begin(), more.end());
  }
  const std::string what = std::string(withMath ? "the math check, then " : "") +
                           (evaluation ? "evaluation time (interleaved evaluations in one process)"
                                       : "training throughput (interleaved segments in one process)");
  auto doc = evaluation ? measure(o, h, "segments", what, evaluationFile(o), args, "evaluation-segments")
                        : measure(o, h, "segments", what, throughputFile(o), args);
  if (!doc.ok()) return doc.error();
  if (withMath) {
    auto math = keptRecord(mathFile(o), kindOf("math"));
    if (!math.ok()) return math.error();
    if (*math) s.math = records::mathCheckFromJson(**math);
  }
  return records::speedRecordFromJson(*doc);
}

// The evaluations the training segments' process timed after its rounds (--evaluation-after);
// nullopt when it did not; an error naming the record when it cannot be read.
Result<std::optional<records::SpeedRecord>> timedAfterTheSegments(const TryOptions& o, const Changes& c, const Hooks& h) {
  if (!evaluationAfterTraining(c)) return std::optional<records::SpeedRecord>();
  auto doc = keptRecord(evaluationSegmentsFile(o), kindOf("evaluation-segments"));
  if (!doc.ok()) return doc.error();
  if (!*doc) return std::optional<records::SpeedRecord>();
  if (h.log) std::fprintf(h.log, "evaluation time: timed after the training segments, in their process\n");
  return std::optional<records::SpeedRecord>(records::speedRecordFromJson(**doc));
}

}  // namespace

void phase(const Hooks& h, const std::string& what, int done, int total, bool kept) {
  h.emit(proto::toEvent(proto::PhaseEvent{what, done, total, kept}, -1, 0.0));
}

Result<Speed> measureSpeed(const TryOptions& o, bool futility, const Hooks& h) {
  const Changes changes = changesOf(o);
  const bool trials = changes.has(Part::Trials), steps = trials || changes.has(Part::Segments);
  const bool evaluation = changes.timesEvaluation();
  Speed s;
  bool withMath = !trials && (steps || evaluation) && records::readStored(mathFile(o)).missing();
  if (!withMath)
    if (auto st = checkMathAlone(o, h, s); !st.ok()) return st.error();
  auto throughput = !steps    ? Result<records::SpeedRecord>(records::unchangedSpeed())
                    : !trials ? measureSegments(o, changes, futility, h, false, withMath, s)
                              : measureByTrials(o, h, false, keepsMath(s.math), futility && samplesNeverFewer(o));
  if (!throughput.ok()) return throughput.error();
  s.throughput = std::move(*throughput);
  withMath = withMath && !s.math;
  if (evaluation) {
    // Evaluations in one process, as the steps' segments (after them, in their process, when only
    // the training's lever reaches them), unless the steps change in a way one process cannot
    // switch (then short evaluating trials, whole processes).
    auto timed = trials ? Result<std::optional<records::SpeedRecord>>(std::nullopt) : timedAfterTheSegments(o, changes, h);
    if (!timed.ok()) return timed.error();
    auto& after = *timed;
    auto doc = after    ? Result<records::SpeedRecord>(std::move(*after))
               : trials ? measureByTrials(o, h, true, true)
                        : measureSegments(o, changes, futility, h, true, withMath, s);
    if (!doc.ok()) return doc.error();
    s.evaluation = std::move(*doc);
  }
  if (auto st = checkMathAlone(o, h, s); !st.ok()) return st.error();  // a record kept from before, no math.json
  return s;
}

}  // namespace wb::experiment::detail
