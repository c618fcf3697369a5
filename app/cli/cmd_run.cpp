// workbench-cli run | capabilities (worker: cmd_worker.cpp).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>

#include <opencv2/core/version.hpp>
#include <torch/torch.h>

#include "command_setup.h"
#include "commands.h"
#include "wb/common/choices.h"
#include "wb/common/exit_codes.h"
#include "wb/common/paths.h"
#include "wb/common/resume_rules.h"
#include "wb/common/config_schema.h"
#include "wb/common/speedups.h"
#include "wb/common/sysinfo.h"
#include "wb/common/timeouts.h"
#include "wb/experiment/paired_runner.h"
#include "wb/launch/launcher.h"
#include "wb/proto/capability_keys.h"
#include "wb/proto/config_json.h"
#include "wb/proto/event_types.h"
#include "wb/proto/events.h"
#include "wb/proto/rundir.h"
#include "wb/proto/run_status.h"
#include "wb/probe/peak_probe.h"
#include "wb/records/peak_store.h"
#include "wb/train/machine_capabilities.h"
#include "wb/train/checkpoint.h"
#include "wb/train/resume_check.h"
#include "wb/train/trainer.h"
#include "worker_dist.h"

namespace wb::cli {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const char* kRunAbout = R"(train one experiment (spawns one worker per device) and write its run directory

Trains one experiment: spawns one `workbench-cli worker` per device (speedups.devices) with the
torchrun environment, merges their events and writes the run directory
<runs-root>/<run-id>/{config.json, events.jsonl, summary.json, env.json, checkpoints/, logs/}.
`workbench-cli` alone runs the default experiment; `workbench-cli --set KEY=VALUE ...` is `run`.)";

const char* kRunExit = R"(
Exit codes: 0 ok or early-stopped, 1 failed, 2 bad config, 3 data error, 4 diverged, 130 cancelled.
SIGINT/SIGTERM: every rank finishes its step, writes `end` (cancelled) and last.pt; exit 130.)";

// The values of the enum-like fields, from the tables the validator checks against.
std::string choicesHelp() {
  std::vector<std::pair<const char*, const std::vector<Choice>*>> fields = {{"data.dataset", &datasetKinds()},
                                                                          {"model.name", &modelChoices()}};
  for (const FieldSpec& f : configSchema())  // every enum-like field of the option schema
    if (f.choices) fields.emplace_back(f.path, &f.choices());
  std::string out = "Speedups (the field that turns each on):\n";
  for (const Speedup& s : speedupTable()) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-32s %s%s%s%s\n", s.config_path, s.label, *s.needs ? " (needs " : "", s.needs,
                  *s.needs ? ")" : "");
    out += line;
  }
  out += "Values (--set KEY=VALUE):\n";
  for (const auto& [field, choices] : fields) {
    out += std::string("  ") + field + "\n";
    for (const Choice& c : *choices) {
      char line[256];
      std::snprintf(line, sizeof line, "    %-14s %s%s\n", c.value, c.help, c.needs_cuda ? " (needs CUDA)" : "");
      out += line;
    }
  }
  out += "    (model.name also takes torchscript:<file.pt>)\n";
  return out + kRunExit;
}

std::string humanDuration(double s) {
  char buf[32];
  if (!std::isfinite(s) || s < 0) return "?";
  int t = static_cast<int>(s + 0.5);
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%dh%02dm", t / 3600, (t / 60) % 60);
  else std::snprintf(buf, sizeof buf, "%dm%02ds", t / 60, t % 60);
  return buf;
}

// The human progress view of the event stream, one printer per event type. The typed readers
// never throw: a field that is null or missing (a NaN loss is written as null) keeps its default.
void printRunLine(const proto::RunEvent& run) {
  std::fprintf(stderr, "run %s -> %s\n", run.run_id.c_str(), run.run_dir.c_str());
  if (run.resume) std::fprintf(stderr, "resuming from %s\n", run.resume->c_str());
  for (const auto& change : run.config_changes.is_array() ? run.config_changes : json::array())
    if (change.is_string()) std::fprintf(stderr, "  changed %s\n", change.get<std::string>().c_str());
}

void printStartLine(const proto::StartEvent& start) {
  std::fprintf(stderr, "%s on %s: %lld train / %lld val samples, %s, %d thread(s), world size %d\n",
               start.model.name.c_str(), start.dataset.name.c_str(), static_cast<long long>(start.dataset.train),
               static_cast<long long>(start.dataset.val), start.device.c_str(), start.threads,
               start.world_size > 0 ? start.world_size : 1);
  for (const auto& [name, s] : start.speedups)
    if (s.requested && !s.active)
      std::fprintf(stderr, "  note: %s requested but not active: %s\n", name.c_str(), s.note.c_str());
}

void printStepLine(const proto::StepEvent& step, const char* clear, bool tty) {
  std::fprintf(stderr, "%sepoch %d step %lld  loss %.4f  %.0f train samples/s  %3.0f%%  ETA %s%s", clear, step.epoch,
               static_cast<long long>(step.step), step.loss, step.samples_per_s, 100.0 * step.progress,
               humanDuration(step.eta_s).c_str(), tty ? "" : "\n");
}

void printEvalLine(const proto::EvalEvent& eval, const char* clear) {
  std::fprintf(stderr, "%sepoch %d  val_loss %.4f  val_acc %.4f  (eval %.0f ms)\n", clear, eval.epoch, eval.val_loss,
               eval.val_acc, eval.eval_ms);
}

// An error once: the launcher's word on a failed rank repeats what the rank said ("rank 0:
// <its message>"); an error that ends with one already printed is not printed again.
void printError(const std::string& message, const char* clear, std::vector<std::string>& printed) {
  const auto repeats = [&](const std::string& e) {
    return message.size() >= e.size() && message.compare(message.size() - e.size(), e.size(), e) == 0;
  };
  if (std::any_of(printed.begin(), printed.end(), repeats)) return;
  printed.push_back(message);
  std::fprintf(stderr, "%serror: %s\n", clear, message.c_str());
}

void printProgress(const json& ev, bool tty, std::vector<std::string>& printedErrors) {
  const proto::Envelope envelope = proto::readEnvelope(ev);
  const std::string& type = envelope.type;
  const char* clear = tty ? "\r\033[K" : "";
  const bool rank0 = envelope.rank.value_or(0) == 0;
  if (type == proto::RunEvent::kType) printRunLine(proto::readRunEvent(ev));
  else if (type == proto::StartEvent::kType && rank0) printStartLine(proto::readStartEvent(ev));
  else if (type == proto::StepEvent::kType && rank0) printStepLine(proto::readStepEvent(ev), clear, tty);
  else if (type == proto::EvalEvent::kType && rank0) printEvalLine(proto::readEvalEvent(ev), clear);
  else if (type == proto::WarningEvent::kType)
    std::fprintf(stderr, "%swarning: %s\n", clear, proto::readWarningEvent(ev).message.c_str());
  else if (type == proto::ErrorEvent::kType)
    printError(proto::readErrorEvent(ev).message, clear, printedErrors);
  else if (type == proto::EarlyStopEvent::kType)
    std::fprintf(stderr, "early stop: %s\n", proto::readEarlyStopEvent(ev).reason.c_str());
}

// A figure of the summary, NaN when it has none (printed only when finite).
template <class T>
double figure(const std::optional<T>& v) {
  return v ? static_cast<double>(*v) : std::nan("");
}

void printCpu(const proto::RunCpu& c) {
  std::printf("cpu           %.2f cores used of %.0f asked, other load %.2f of %.0f cores%s\n", figure(c.used_cores),
              figure(c.asked_cores), figure(c.other_load_cores), static_cast<double>(c.cores),
              c.contended.value_or(false) ? "  (CONTENDED: not this machine's speed)" : "");
}

void printSummary(const launch::RunOutcome& out) {
  const proto::RunSummary& s = out.summary;
  std::printf("\nstatus        %s\n", out.status.c_str());
  std::printf("run dir       %s\n", out.run_dir.c_str());
  if (std::isfinite(figure(s.final_val_acc)))
    std::printf("val acc       %.4f (best %.4f)\n", figure(s.final_val_acc), figure(s.best_val_acc));
  if (std::isfinite(figure(s.best_val_loss))) std::printf("best val loss %.4f\n", figure(s.best_val_loss));
  if (s.epochs) std::printf("epochs        %d (%.0f steps)\n", *s.epochs, figure(s.steps));
  if (s.target_val_acc) {
    if (s.samples_to_target)
      std::printf("to target     %.0f samples, %.0f steps (val acc >= %.4f)\n", figure(s.samples_to_target),
                  figure(s.steps_to_target), *s.target_val_acc);
    else
      std::printf("to target     not reached (val acc >= %.4f)\n", *s.target_val_acc);
  }
  if (std::isfinite(figure(s.train_s)))
    std::printf("training      %.0f samples/s (training steps only: %.0f samples in %.2f s)\n",
                figure(s.train_samples_per_s), figure(s.train_samples), figure(s.train_s));
  if (std::isfinite(figure(s.eval_s))) std::printf("evaluation    %.2f s\n", figure(s.eval_s));
  if (std::isfinite(figure(s.time_to_first_step_s)))
    std::printf("first step    %.2f s after start\n", figure(s.time_to_first_step_s));
  if (std::isfinite(figure(s.run_wall_s))) std::printf("whole run     %.2f s\n", figure(s.run_wall_s));
  if (s.peak_mem) std::printf("peak memory   %.1f MiB\n", figure(s.peak_mem) / 1048576.0);
  if (s.cpu) printCpu(*s.cpu);
  if (s.error) std::printf("error         %s\n", s.error->c_str());
  if (s.message) std::printf("note          %s\n", s.message->c_str());
  if (s.best_weights_note) std::printf("best weights  %s\n", s.best_weights_note->c_str());
}

struct RunOptions {
  ExperimentOptions experiment;
  experiment::UserCommand user_command;
  std::string runs_root, run_dir, resume, from;
  bool overwrite = false, events_stdout = false, print_config = false, print_schema = false, fine_tune = false;
  bool allow_oversubscribe = false;
  int collective_timeout = kDefaultCollectiveTimeoutS;
};

// Refusals of option combinations, in the words and exit codes they had before CLI11.
int checkRunCombination(const RunOptions& o, const std::optional<std::string>& resume) {
  if (resume && !o.experiment.config.empty()) {
    std::fprintf(stderr, "workbench-cli run: --config and --resume: a resumed run keeps its own config.json; "
                         "change fields of it with --set KEY=VALUE (e.g. --set train.epochs=10)\n");
    return kExitUsage;
  }
  if (!o.from.empty() && !resume) {
    std::fprintf(stderr, "workbench-cli run: --from %s: pass it with --resume RUN_DIR\n", o.from.c_str());
    return kExitUsage;
  }
  if (o.fine_tune && !resume) {
    std::fprintf(stderr, "workbench-cli run: --fine-tune: pass it with --resume RUN_DIR and --set data.dataset=<another "
                         "dataset> (a new run on that dataset needs no --fine-tune)\n");
    return kExitUsage;
  }
  if (resume && o.overwrite) {
    std::fprintf(stderr, "workbench-cli run: --overwrite and --resume: --resume continues the run in its folder, "
                         "--overwrite replaces it; pass one\n");
    return kExitUsage;
  }
  if (resume && !fs::is_regular_file(fs::path(*resume) / "config.json")) {
    std::fprintf(stderr, "workbench-cli run: --resume %s: not a run directory (it has no config.json); pass the folder "
                         "`run` printed (under --runs-root), not a checkpoint file\n", resume->c_str());
    return kExitUsage;
  }
  return 0;
}

// A checkpoint the ranks would refuse (corrupt, or written for another model, dataset or image
// size) is refused here, before the launcher touches the run: a refused resume leaves every file
// of the finished run as it was. 0 when the resume may go on, else the exit code.
int checkResumeBeforeLaunch(const Config& config, const std::string& resume, const std::string& from, bool fineTune) {
  const proto::RunDir run{fs::absolute(resume)};
  const std::string ckPath = (from == "best" ? run.bestCheckpoint() : run.lastCheckpoint()).string();
  if (!fs::exists(ckPath)) return 0;  // the launcher says there is nothing to resume from
  auto ck = train::loadCheckpoint(ckPath);
  Status st = ck.ok() ? train::checkCheckpointFits(*ck, config, resume, fineTune) : Status(ck.error());
  if (st.ok()) return 0;
  std::fprintf(stderr, "workbench-cli run: --resume %s: %s (the run is left as it was)\n", resume.c_str(),
               st.error().message.c_str());
  return exitCodeFor(st.error().code);
}

// --command: the user's script once, with the config's settings, into its own run folder.
int userCommandRun(const RunOptions& o, const Config& config, const experiment::UserCommand& command) {
  if (o.overwrite) {
    std::fprintf(stderr, "workbench-cli run: --overwrite and --command: a finished run is never replaced by a command's: give a new --run-dir\n");
    return kExitUsage;
  }
  const fs::path dir = launch::newRunDir(config, o.runs_root, o.run_dir);
  installStopSignals();
  const bool tty = ::isatty(STDERR_FILENO);
  std::vector<std::string> printedErrors;
  auto out = experiment::launchOne(config, dir, command, selfPath(), "the run", [&](const json& ev) {
    if (!o.events_stdout) return printProgress(ev, tty, printedErrors);
    std::printf("%s\n", proto::encodeEvent(ev).c_str());
    std::fflush(stdout);
  });
  if (!out.ok()) {
    std::fprintf(stderr, "workbench-cli run: %s\n", out.error().message.c_str());
    return exitCodeFor(out.error().code);
  }
  if (!o.events_stdout) printSummary(*out);
  return out->exit_code;
}

int runCommand(const RunOptions& o, const std::optional<std::string>& resume) {
  if (o.print_schema) {
    std::printf("%s\n", proto::schemaJson().dump(2).c_str());
    return 0;
  }
  if (int code = checkRunCombination(o, resume)) return code;
  const std::string from = o.from.empty() ? "last" : o.from;
  Result<Config> config = resolveConfig(o.experiment, resume ? (fs::path(*resume) / "config.json").string() : "");
  if (!config.ok()) {
    std::fprintf(stderr, "workbench-cli run: invalid config:\n%s\n", config.error().message.c_str());
    if (o.events_stdout) {
      const proto::ErrorEvent error{config.error().message, errcName(config.error().code), std::nullopt};
      std::printf("%s\n", proto::encodeEvent(proto::toEvent(error, -1, 0.0)).c_str());
    }
    return kExitUsage;
  }
  if (o.print_config) {
    std::printf("%s\n", proto::configToJson(*config).dump(2).c_str());
    return 0;
  }
  if (const experiment::UserCommand command = userCommandOf(o.user_command, o.experiment); command.set()) {
    if (resume) {
      std::fprintf(stderr, "workbench-cli run: --resume and --command: a command's run cannot be resumed by the workbench\n");
      return kExitUsage;
    }
    return userCommandRun(o, *config, command);
  }
  if (auto errs = train::machineConfigErrors(*config, 1, o.allow_oversubscribe); !errs.empty()) {
    std::fprintf(stderr, "workbench-cli run: invalid config for this machine:\n%s\n", formatFieldErrors(errs).c_str());
    return kExitUsage;
  }
  if (resume)
    if (int code = checkResumeBeforeLaunch(*config, *resume, from, o.fine_tune)) return code;
  installStopSignals();
  launch::LaunchOptions lo;
  lo.startup_s = processAgeSeconds();
  lo.cli_path = selfPath();
  lo.runs_root = o.runs_root;
  lo.run_dir = o.run_dir;
  lo.resume_dir = resume.value_or("");
  lo.resume_from = from;
  lo.overwrite = o.overwrite;
  lo.fine_tune = o.fine_tune;
  lo.collective_timeout_s = o.collective_timeout;
  const bool eventsOut = o.events_stdout;
  const bool tty = ::isatty(STDERR_FILENO);
  std::vector<std::string> printedErrors;
  lo.on_event = [&](const json& ev) {
    if (eventsOut) {
      std::string line = proto::encodeEvent(ev) + "\n";
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fflush(stdout);
    } else {
      printProgress(ev, tty, printedErrors);
    }
  };
  auto out = launch::launchRun(*config, lo);
  if (!out.ok()) {
    std::fprintf(stderr, "workbench-cli run: %s\n", out.error().message.c_str());
    return exitCodeFor(out.error().code);
  }
  if (!eventsOut) printSummary(*out);
  return out->exit_code;
}

}  // namespace

void addRun(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<RunOptions>();
  CLI::App* run = cli.add_subcommand("run", kRunAbout);
  addExperimentOptions(*run, o->experiment, "experiment JSON (see docs/runs.md \"Config\"); every field has a default");
  addUserCommandOptions(*run, o->user_command);
  run->add_option("--runs-root", o->runs_root,
                  "where run folders go (default $WB_RUNS_ROOT or ~/.local/share/speedup-workbench/runs)")
      ->type_name("DIR")->check(utf8Path("--runs-root"));
  run->add_option("--run-dir", o->run_dir,
                  "use exactly this run folder; refused (exit 2) while another run is using it,\n"
                  "and when it already holds a run (continue that with --resume, or --overwrite)")
      ->type_name("DIR")->check(utf8Path("--run-dir"));
  run->add_flag("--overwrite", o->overwrite, "replace the run already in --run-dir (its events, summary, checkpoints, logs)");
  CLI::Option* resume = run->add_option("--resume", o->resume,
      "continue RUN_DIR from checkpoints/last.pt (model, optimiser, schedule,\n"
      "loss scaler, early stopping, RNG and sampler position restored), with its\n"
      "config.json; --set changes fields of it (train.epochs to train longer,\n"
      "speedups.devices / speedups.sharding to continue on other ranks), and the\n"
      "config it replaces is kept as config.before-resume-N.json")
      ->type_name("RUN_DIR")->check(utf8Path("--resume"));
  run->add_option("--from", o->from,
                  "with --resume: the checkpoint to continue from (default last; best when\n"
                  "last.pt is unreadable; the run continues from best.pt's epoch)")
      ->type_name("last|best")->check(checkedBy(checkResumeFrom, ""));
  run->add_flag("--allow-oversubscribe", o->allow_oversubscribe,
                "run more CPU devices (speedups.devices) than the machine has cores (else\n"
                "refused, exit 2); the run says so in a warning and its summary's\n"
                "cpu.oversubscribed, and no speedup is taken from it");
  run->add_flag("--fine-tune", o->fine_tune,
                "with --resume and --set data.dataset=<another dataset>: continue the run's\n"
                "weights on that dataset (same classes, channels and image size); the run\n"
                "event and summary.json say fine_tuned_from. Without it a resume on another\n"
                "dataset is refused (exit 2)");
  run->add_flag("--events-stdout", o->events_stdout, "print events as JSON Lines on stdout (for the GUI and scripts)");
  run->add_flag("--print-config", o->print_config, "print the resolved config and exit");
  run->add_flag("--print-schema", o->print_schema,
                "print every config field's label, help, type, default and range as JSON, and exit");
  run->add_option("--collective-timeout", o->collective_timeout,
                  "seconds before a collective with a dead peer fails (default " +
                      std::to_string(kDefaultCollectiveTimeoutS) + ")")
      ->type_name("S")->check(inRange(1, 86400));
  run->footer(choicesHelp());
  out.push_back({run, [o, resume] {
                   return runCommand(*o, *resume ? std::optional<std::string>(o->resume) : std::nullopt);
                 }, true});
}

namespace {

// The stored peak, one line per device: "peak (measured 2026-12-01): cpu, 2 threads: fp32 matmul
// 95.1; fp32 conv (3x3 64->64, …) 30.2; fp32 conv (3x3 256->256, …) 250.3 (peak); … GFLOP/s" (a
// shape where a kernel ran in more than one) and, on a GPU, its datasheet entry or that it has none.
void printPeak(const json& peak) {
  if (!proto::boolOr(peak, "measured", false)) {
    std::printf("peak: not measured on this machine (workbench-cli probe peak, about 5 s)\n");
    return;
  }
  auto doc = records::peakFromJson(peak);
  if (!doc.ok()) return;
  std::printf("peak (measured %s; 1 multiply-add = 2 FLOPs):\n", proto::stringOr(peak, "date", "").c_str());
  for (const auto& d : doc->devices) {
    std::string line = "  " + d.device + (d.device == "cpu" ? ", " + std::to_string(d.threads) + " threads" : "") + ":";
    for (const auto& k : d.kernels) {
      const bool several = std::count_if(d.kernels.begin(), d.kernels.end(), [&](const records::PeakKernel& o) {
                             return o.kernel == k.kernel && o.precision == k.precision;
                           }) > 1;
      line += " " + k.precision + " " + k.kernel + (several ? " (" + k.shape + ")" : "") + " " +
              wb::fmtFixed(k.gflop_per_s, 1) + (d.best(k.precision) == &k ? " (peak)" : "") + ";";
    }
    line += " GFLOP/s";
    for (const auto& s : d.skipped) line += "; " + s.precision + " not measured: " + s.why;
    std::printf("%s\n", line.c_str());
    if (d.device.rfind("cuda", 0) != 0) continue;
    const records::DatasheetEntry* e = records::datasheetFor(d.name);
    if (e)
      std::printf("  datasheet (dense) %s: fp32 %.1f, tf32 %.1f, bf16 %.1f, fp16 %.1f TFLOP/s (%s)\n", e->gpu.c_str(), e->fp32,
                  e->tf32, e->bf16, e->fp16, e->source.c_str());
    else
      std::printf("  datasheet: %s is not in the table (no datasheet percentage)\n", d.name.c_str());
  }
}

int capabilitiesCommand(bool asJson) {
  json c = train::capabilitiesJson();
  c[proto::caps::kVersion] = WB_VERSION;
  c[proto::caps::kOpencv] = CV_VERSION;
  records::attachPeak(c, probe::storedPeak());
  if (asJson) {
    std::printf("%s\n", c.dump(2).c_str());
    return 0;
  }
  std::printf("workbench-cli %s  LibTorch %s  OpenCV %s\n", WB_VERSION, c["libtorch"].get<std::string>().c_str(), CV_VERSION);
  std::printf("CUDA: %s   GPUs: %d   cores: %d\n", c["cuda"].get<bool>() ? "yes" : "no", c["gpus"].get<int>(),
              c["cores"].get<int>());
  for (auto& [name, s] : c["speedups"].items())
    std::printf("  %-15s %-14s %s\n", name.c_str(), s.value("available", false) ? "available" : "not available",
                s.value("note", "").c_str());
  printPeak(c[proto::caps::kPeak]);
  return 0;
}

}  // namespace

void addCapabilities(CLI::App& cli, Commands& out) {
  auto asJson = std::make_shared<bool>(false);
  CLI::App* caps = cli.add_subcommand("capabilities",
      "what this machine can do (CUDA, GPUs, cores, which speedups apply), as JSON\n\n"
      "What this machine can do: CUDA, GPUs, cores, and each speedup's availability with the reason.");
  caps->add_flag("--json", *asJson, "print it as one JSON document (what the window reads)");
  out.push_back({caps, [asJson] { return capabilitiesCommand(*asJson); }});
}

}  // namespace wb::cli
