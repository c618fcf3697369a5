// workbench-cli probe workers: option parsing over core/probe (wb/probe/workers.h measures and
// stores; the record, rule, table and chart are wb/probe/record.h); this file prints.
#include <algorithm>
#include <cstdio>

#include "commands.h"
#include "command_setup.h"
#include "wb/common/exit_codes.h"
#include "wb/common/fs.h"
#include "wb/probe/math_check.h"
#include "wb/probe/peak_probe.h"
#include "wb/probe/segments.h"
#include "wb/probe/workers.h"
#include "wb/records/peak_store.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kAbout =
    R"(probe workers | peak | segments | math: the loader and worker counts; this machine's attainable FLOP/s; an in-process A/B; whether a change keeps the math)";

const char* kPeakAbout = R"(this machine's attainable peak: matrix multiply and convolution GFLOP/s per precision

Times a square matrix multiply and ResNet-like 3x3 convolutions (on a CPU an early layer, 64
channels at 56 x 56, and a deep one, 256 channels at 14 x 14, NCHW as the models run them) at each
precision this machine runs natively (CPU: fp32, and bf16 where the CPU has AVX-512 BF16 or AMX;
GPU: fp32, TF32, bf16, fp16), each repeated until two consecutive timed windows agree within 3 %
(about a second each). The peak at a precision is its fastest kernel. FLOPs count a multiply and
an add as two. The CPU is timed with all its logical cores, as a run
with train.threads = 0 uses them.

The result is stored per machine (host, CPU, cores and GPU names) in <probes>/peak-<key>.json;
every later run on this machine reports its achieved GFLOP/s as a percentage of it (step events,
summary.json, compare, the ladder, exports, the window), and `capabilities` shows it.)";

const char* kWorkersAbout = R"(how many loader workers this experiment wants on this machine

Times (a) the loader alone (0 workers, the real dataset and transforms, no model), (b) the
training step alone (the real model and optimiser on one cached batch, no loading), then (c)
each candidate worker count for a few seconds on the real experiment (real loader, real steps),
in interleaved rounds (every count once a round, so a change in the machine's speed falls on
every count): at least --min-rounds, then more until the choice is settled or --max-rounds.
The rounds' own noise (what is left of the log rates once each count's and each round's level
are taken out) gives every count's speedup over 0 workers a 95 % interval, and the probe
recommends the smallest count the fastest one is not clearly faster than: more workers only for
a gain larger than the noise. Says so when the data path is not the bottleneck (then more
workers cannot help).

The result is stored per machine and experiment (host, CPU and the experiment's data, model and
batch size) in <probes>/<key>.json, with the plot of samples/s against workers beside it
(<key>.svg, and <key>.png when rsvg-convert is installed). <probes> is $WB_PROBES_DIR, else
"probes" beside the runs root (~/.local/share/speedup-workbench/probes). The ladder's workers
step and the window's Loader workers toggle read it.)";

const char* kFooter = R"(
Exit codes: 0 ok, 1 other failure, 2 bad config or usage, 3 data error, 130 cancelled.)";

struct ProbeCliOptions {
  ExperimentOptions experiment;
  std::vector<int> candidates;
  double seconds = probe::WorkersProbeOptions().seconds;
  int min_rounds = probe::WorkersProbeOptions().min_rounds, max_rounds = probe::WorkersProbeOptions().max_rounds;
  bool json = false, no_store = false;
};

int probeWorkersCommand(const ProbeCliOptions& cli) {
  auto config = resolveConfig(cli.experiment);
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli probe workers: %s\n", config.error().message.c_str());
    return kExitUsage;
  }
  if (cli.max_rounds < cli.min_rounds) {
    std::fprintf(stderr, "workbench-cli probe workers: --max-rounds %d is below --min-rounds %d; raise --max-rounds\n",
                 cli.max_rounds, cli.min_rounds);
    return kExitUsage;
  }
  probe::WorkersProbeOptions o;
  o.config = *config;
  for (int c : cli.candidates)  // in the order given, each once
    if (std::find(o.candidates.begin(), o.candidates.end(), c) == o.candidates.end()) o.candidates.push_back(c);
  o.seconds = cli.seconds;
  o.min_rounds = cli.min_rounds;
  o.max_rounds = cli.max_rounds;
  o.progress = [](const std::string& line) { std::fprintf(stderr, "probe: %s\n", line.c_str()); };
  installStopSignals();
  o.stop = &stopFlag();

  auto result = probe::probeWorkers(o);
  if (!result.ok()) {
    std::fprintf(stderr, "workbench-cli probe workers: %s\n", result.error().message.c_str());
    return exitCodeFor(result.error().code);
  }
  std::string problem;
  const json files = cli.no_store ? json::object() : probe::storeProbe(*result, records::probesDir(), &problem);
  if (!problem.empty()) std::fprintf(stderr, "workbench-cli probe workers: not stored: %s\n", problem.c_str());
  if (cli.json) {
    json doc = probe::probeJson(*result);
    doc["files"] = files;
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::printf("%s", render::renderText(probe::probeTable(*result)).c_str());
    std::printf("\nMeasured in %.1f s.\n", result->total_s);
    for (const auto& [kind, path] : files.items()) std::printf("%-4s %s\n", kind.c_str(), path.get<std::string>().c_str());
  }
  return problem.empty() ? 0 : 1;
}

struct PeakCliOptions {
  double seconds = probe::PeakProbeOptions().seconds;
  bool json = false, no_store = false, cpu_only = false;
};

int probePeakCommand(const PeakCliOptions& cli) {
  probe::PeakProbeOptions o;
  o.seconds = cli.seconds;
  o.cuda = !cli.cpu_only;
  o.progress = [](const std::string& line) { std::fprintf(stderr, "peak: %s\n", line.c_str()); };
  installStopSignals();
  o.stop = &stopFlag();
  auto result = probe::measurePeak(o);
  if (!result.ok()) {
    std::fprintf(stderr, "workbench-cli probe peak: %s\n", result.error().message.c_str());
    return exitCodeFor(result.error().code);
  }
  std::string stored, problem;
  if (!cli.no_store) {
    if (auto st = records::savePeak(*result); st.ok())
      stored = records::peakPath(result->key).string();
    else
      problem = st.error().message;
  }
  if (!problem.empty()) std::fprintf(stderr, "workbench-cli probe peak: not stored: %s\n", problem.c_str());
  if (cli.json) {
    json doc = records::peakJson(*result);
    doc["file"] = stored;
    std::printf("%s\n", doc.dump(2).c_str());
  } else {
    std::printf("%s", render::renderText(records::peakTable(*result)).c_str());
    std::printf("\nMeasured in %.1f s.\n", result->total_s);
    if (!stored.empty()) std::printf("json %s\n", stored.c_str());
  }
  return problem.empty() ? 0 : 1;
}

const char* kSegmentsAbout = R"(a throughput verdict in seconds: baseline and variant alternating in one process

The experiment (--config/--set: the baseline) and the same with --vary applied (the variant)
train one model in alternating segments (A B, B A, ...), each after two untimed steps, after a
warm-up of each that measures its step time: a segment is as many steps as make --min-segment-s
on the faster one (or --steps). Each segment's train samples/s (data wait included) is one value; the noise is the rounds'
own, the verdict the product's rule (faster or slower only when the interval excludes 1 and the
effect is beyond --min-effect), and rounds are added until it is clear (--min-rounds,
--max-rounds). Only levers that can change inside one process (the speedups timed by segments,
and the batch; with --evaluation, evaluation passes are timed instead of training steps and the
evaluation levers may differ too): see the error for a config that differs in another. Time to the target accuracy
needs whole runs: `workbench-cli try`.)";

struct SegmentsCliOptions {
  ExperimentOptions experiment;
  std::vector<std::string> vary;
  std::string variant_config;
  int steps = probe::SegmentsOptions().steps;
  double min_segment_s = probe::SegmentsOptions().min_segment_s;
  int min_rounds = probe::SegmentsOptions().min_rounds, max_rounds = probe::SegmentsOptions().max_rounds;
  double min_effect = stats::kDefaultMinEffect;
  bool only_faster = false, evaluation = false;
  std::string math_check;  // "": no math check first
  std::string evaluation_after;  // "": the training's rounds only
  bool json = false;
};

int probeSegmentsCommand(const SegmentsCliOptions& cli) {
  const char* who = "workbench-cli probe segments";
  if (cli.vary.empty() && cli.variant_config.empty()) {
    std::fprintf(stderr, "%s: say what the variant changes: --vary KEY=VALUE (e.g. speedups.precision=bf16-mixed) or --variant-config FILE\n", who);
    return kExitUsage;
  }
  auto arms = resolveArms(cli.experiment, cli.vary, cli.variant_config);
  if (!arms.ok()) {
    std::fprintf(stderr, "%s: %s\n", who, arms.error().message.c_str());
    return kExitUsage;
  }
  if (cli.max_rounds < cli.min_rounds) {
    std::fprintf(stderr, "%s: --max-rounds %d is below --min-rounds %d; raise --max-rounds\n", who, cli.max_rounds,
                 cli.min_rounds);
    return kExitUsage;
  }
  probe::SegmentsOptions o;
  o.baseline = arms->baseline;
  o.variant = arms->variant;
  o.steps = cli.steps;
  o.min_segment_s = cli.min_segment_s;
  o.min_rounds = cli.min_rounds;
  o.max_rounds = cli.max_rounds;
  o.min_effect = cli.min_effect;
  o.only_faster = cli.only_faster;
  o.evaluation = cli.evaluation;
  o.evaluation_after = !cli.evaluation_after.empty();
  if (cli.evaluation && o.evaluation_after) {
    std::fprintf(stderr, "%s: --evaluation-after times the evaluations after training segments: leave out --evaluation\n", who);
    return kExitUsage;
  }
  if (!cli.math_check.empty())
    o.math_checked = [&cli](const probe::MathCheckResult& m) {
      return writeFileAtomic(cli.math_check, probe::mathCheckJson(m).dump(2) + "\n");
    };
  o.progress = [](const std::string& line) { std::fprintf(stderr, "segments: %s\n", line.c_str()); };
  installStopSignals();
  o.stop = &stopFlag();
  auto result = probe::probeSegments(o);
  if (!result.ok()) {
    std::fprintf(stderr, "%s: %s\n", who, result.error().message.c_str());
    return exitCodeFor(result.error().code);
  }
  if (result->evaluation_after)
    if (auto st = writeFileAtomic(cli.evaluation_after, probe::segmentsJson(*result->evaluation_after).dump(2) + "\n"); !st.ok()) {
      std::fprintf(stderr, "%s: %s\n", who, st.error().message.c_str());
      return exitCodeFor(st.error().code);
    }
  if (cli.json) std::printf("%s\n", probe::segmentsJson(*result).dump(2).c_str());
  else std::printf("%s\nMeasured in %.1f s.\n", render::renderText(probe::segmentsTable(*result)).c_str(), result->total_s);
  if (!cli.json && result->evaluation_after)
    std::printf("\n%s\nMeasured in %.1f s (json %s).\n", render::renderText(probe::segmentsTable(*result->evaluation_after)).c_str(),
                result->evaluation_after->total_s, cli.evaluation_after.c_str());
  return 0;
}

void addSegments(CLI::App& probe, Commands& out) {
  auto o = std::make_shared<SegmentsCliOptions>();
  CLI::App* seg = probe.add_subcommand("segments", kSegmentsAbout);
  addExperimentOptions(*seg, o->experiment, "the baseline experiment (default: Fashion-MNIST, lenet)");
  seg->add_option("--variant-config", o->variant_config, "the variant's own config (then the --set and --vary apply to it)")
      ->type_name("FILE")->check(utf8Path("--variant-config"));
  seg->add_option("--vary", o->vary, "KEY=VALUE: what the variant changes (an in-process lever; repeat it for more)")
      ->type_name("KEY=VALUE")->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  seg->add_option("--steps", o->steps, "timed training steps per segment (default: sized from the warm-up's step time\n"
                                      "so that a segment lasts --min-segment-s)")
      ->type_name("N")->check(inRange(1, 10000));
  seg->add_option("--min-segment-s", o->min_segment_s, "a sized segment's least duration in seconds (default 0.5)")
      ->type_name("S")->check(inRange(0.05, 600.0));
  seg->add_option("--min-rounds", o->min_rounds, "rounds at least (default 3)")->type_name("N")->check(inRange(2, 100));
  seg->add_option("--max-rounds", o->max_rounds, "rounds at most, added until the verdict is clear (default 8)")
      ->type_name("N")->check(inRange(2, 100));
  addMinEffectOption(*seg, o->min_effect);
  seg->add_flag("--evaluation", o->evaluation,
                "time evaluations instead of training steps: passes over the validation split, so the\n"
                "evaluation levers (inference-mode eval, the evaluation batch) may differ too");
  seg->add_option("--evaluation-after", o->evaluation_after,
                  "and then time the evaluations too, in this process, in their fewest rounds (--min-rounds),\n"
                  "writing their record (as --evaluation's --json) to FILE: for a training lever that acts there too")
      ->type_name("FILE")->check(utf8Path("--evaluation-after"));
  seg->add_flag("--only-faster", o->only_faster,
                "the question is only whether it is faster (the ladder's): stop once under a 10 % chance is\n"
                "left that the last round would say so (with --math-check: only when the change keeps the math;\n"
                "with --evaluation: faster to the target, the evaluation weighed by its share of the run)");
  seg->add_option("--math-check", o->math_check,
                  "first check in this process whether the change keeps the math (as `probe math`) and write\n"
                  "that result to FILE (JSON) before the first round")
      ->type_name("FILE")->check(utf8Path("--math-check"));
  seg->add_flag("--json", o->json, "print the result as one JSON document (progress goes to stderr)");
  seg->footer(kFooter);
  out.push_back({seg, [o] { return probeSegmentsCommand(*o); }, true});
}

const char* kMathAbout = R"(whether a change keeps the training's math: the first steps' losses with and without it

The experiment (--config/--set: the baseline) and the same with --vary applied (the variant)
each train their first --steps steps from the same seed in this process (the real trainer: its
loader, model, optimiser and levers), then evaluate; the baseline trains a second time, so what
its own rerun differs by (nondeterministic kernels) is allowed for. Each step's loss is compared:
the deviation |variant - baseline| / |baseline| must stay within the stated tolerance
(--tolerance x the step, or 3x the baseline's own rerun where that is larger), and the validation
loss after the last step within the last step's. A change past it is treated as changing the
math, and the result names the step and by how much. A speedup that needs more than one process
(speedups.devices, speedups.sharding) or that moves where the run ends (early stopping) is not
checked here: the result says so and what its descriptor says. Exit 0 whether it keeps the math
or not.)";

struct MathCliOptions {
  ExperimentOptions experiment;
  std::vector<std::string> vary;
  std::string variant_config;
  int steps = probe::MathCheckOptions().steps;
  double tolerance = probe::kMathTolerancePerStep;
  bool json = false;
};

int probeMathCommand(const MathCliOptions& cli) {
  const char* who = "workbench-cli probe math";
  if (cli.vary.empty() && cli.variant_config.empty()) {
    std::fprintf(stderr, "%s: say what the variant changes: --vary KEY=VALUE (e.g. speedups.workers=2) or --variant-config FILE\n", who);
    return kExitUsage;
  }
  auto arms = resolveArms(cli.experiment, cli.vary, cli.variant_config);
  if (!arms.ok()) {
    std::fprintf(stderr, "%s: %s\n", who, arms.error().message.c_str());
    return kExitUsage;
  }
  probe::MathCheckOptions o;
  o.baseline = arms->baseline;
  o.variant = arms->variant;
  o.steps = cli.steps;
  o.tolerance_per_step = cli.tolerance;
  o.progress = [](const std::string& line) { std::fprintf(stderr, "math: %s\n", line.c_str()); };
  installStopSignals();
  o.stop = &stopFlag();
  auto result = probe::checkMath(o);
  if (!result.ok()) {
    std::fprintf(stderr, "%s: %s\n", who, result.error().message.c_str());
    return exitCodeFor(result.error().code);
  }
  if (cli.json) std::printf("%s\n", probe::mathCheckJson(*result).dump(2).c_str());
  else std::printf("%s\nChecked in %.1f s.\n", render::renderText(probe::mathCheckTable(*result)).c_str(), result->total_s);
  return 0;
}

void addMath(CLI::App& probe, Commands& out) {
  auto o = std::make_shared<MathCliOptions>();
  CLI::App* math = probe.add_subcommand("math", kMathAbout);
  addExperimentOptions(*math, o->experiment, "the baseline experiment (default: Fashion-MNIST, lenet)");
  math->add_option("--variant-config", o->variant_config, "the variant's own config (then the --set and --vary apply to it)")
      ->type_name("FILE")->check(utf8Path("--variant-config"));
  math->add_option("--vary", o->vary, "KEY=VALUE: what the variant changes (e.g. speedups.workers=2; repeat it for more)")
      ->type_name("KEY=VALUE")->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  math->add_option("--steps", o->steps, "training steps compared (default 20)")->type_name("K")->check(inRange(1, 1000));
  math->add_option("--tolerance", o->tolerance,
                   "relative tolerance per step: step k may differ by k x this (default 0.000002, 0.0002 %)")
      ->type_name("F")->check(inRange(1e-9, 0.5));
  math->add_flag("--json", o->json, "print the result as one JSON document (progress goes to stderr)");
  math->footer(kFooter);
  out.push_back({math, [o] { return probeMathCommand(*o); }, true});
}

void addPeak(CLI::App& probe, Commands& out) {
  auto o = std::make_shared<PeakCliOptions>();
  CLI::App* peak = probe.add_subcommand("peak", kPeakAbout);
  peak->add_option("--seconds", o->seconds, "about how long each kernel is timed (default 1)")
      ->type_name("S")->check(inRange(0.1, 30.0));
  peak->add_flag("--json", o->json, "print the result as one JSON document (progress goes to stderr)");
  peak->add_flag("--no-store", o->no_store, "do not store the result");
  peak->add_flag("--cpu-only", o->cpu_only, "measure the CPU only, also on a GPU machine");
  peak->footer(R"(
Exit codes: 0 ok, 1 other failure (e.g. not stored), 2 usage, 130 cancelled.)");
  out.push_back({peak, [o] { return probePeakCommand(*o); }, true});
}

}  // namespace

void addProbe(CLI::App& cli, Commands& out) {
  CLI::App* probe = cli.add_subcommand("probe", kAbout);
  auto o = std::make_shared<ProbeCliOptions>();
  CLI::App* workers = probe->add_subcommand("workers", kWorkersAbout);
  addExperimentOptions(*workers, o->experiment, "the experiment (default: Fashion-MNIST, lenet)");
  addListOption(*workers, "--candidates", o->candidates, inRange(0, 256),
                "worker counts to time, e.g. 0,1,2,4 (default 0,1,2,4, and the cores when > 4)")
      ->type_name("N,...");
  workers->add_option("--seconds", o->seconds,
                      "timed seconds per candidate over two rounds (default 3: each round times each\n"
                      "count for half of it; the loader and the step alone get half of it each)")
      ->type_name("S")->check(inRange(0.2, 60.0));
  workers->add_option("--min-rounds", o->min_rounds, "interleaved rounds at least (default 2; 1 gives no interval)")
      ->type_name("N")->check(inRange(1, 20));
  workers->add_option("--max-rounds", o->max_rounds,
                      "rounds at most, added while the choice is not settled (default 4)")
      ->type_name("N")->check(inRange(1, 20));
  workers->add_flag("--json", o->json, "print the result as one JSON document (progress goes to stderr)");
  workers->add_flag("--no-store", o->no_store, "do not store the result (nor write the plot)");
  workers->footer(kFooter);
  out.push_back({workers, [o] { return probeWorkersCommand(*o); }, true});
  addPeak(*probe, out);
  addSegments(*probe, out);
  addMath(*probe, out);
  out.push_back(addChooser(*probe, "probe"));
}

}  // namespace wb::cli
