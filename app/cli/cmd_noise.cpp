// workbench-cli noise: this machine's run-to-run spread, measured (an A/A calibration: the same
// configuration run N times as whole `workbench-cli run` processes) or read from the repeats of
// existing runs (--from), printed and stored per host (wb/report/noise.h), where compare, export,
// the ladder and the window read the band their verdicts use.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "experiment.h"
#include "wb/common/exit_codes.h"
#include "wb/launch/slurm_array.h"
#include "wb/launch/slurm_jobs.h"
#include "wb/proto/rundir.h"
#include "wb/report/compare.h"
#include "wb/report/noise.h"

extern char** environ;

namespace wb::cli {
namespace fs = std::filesystem;

namespace {

const char* kAbout = R"(this machine's run-to-run noise: an A/A calibration, stored per host

Runs the configuration (--config/--set; default: the default run) --runs times, each as a whole
`workbench-cli run` process into <out>/aa-N, then measures how much the repeats differ: the spread
of their training throughput and time to the first run's best accuracy, as a band (±, 95 %). Or,
with --from, reads the repeats from existing run folders (they must be one configuration). The
band is stored for this host in <noise>/<key>.json ($WB_NOISE_DIR, else "noise" beside the runs
root). Each run gets its own seed (the configuration's seed + i), so the spread of their best
accuracies is measured too and stored for this experiment. Verdicts use the band as a floor under
the spread of very few pairs (never as the threshold); the host speed check uses the kernel's own
A/A spread; time to target compares at the baseline's best less the accuracy spread.
With --executor slurm the runs go to the cluster as one job array (--sbatch-arg passed through):
<out> must be on a filesystem every node sees (a first job checks), a run Slurm ended is rerun
once, and the same command continues, keeping the runs that finished.)";

struct NoiseOptions {
  ExperimentOptions experiment;
  int runs = 6;
  std::string out;
  std::vector<std::string> from;
  bool no_store = false;
  ExecutorOptions exec;
};

// `workbench-cli run` of A/A run `seed` into `dir` ({run_dir} for an array task).
std::vector<std::string> runArgv(const NoiseOptions& o, const std::string& dir, uint64_t seed) {
  std::vector<std::string> argv{selfPath(), "run", "--run-dir", dir, "--overwrite"};
  if (!o.experiment.config.empty()) argv.insert(argv.end(), {"--config", fs::absolute(o.experiment.config).string()});
  for (const auto& s : o.experiment.sets) argv.insert(argv.end(), {"--set", s});
  argv.insert(argv.end(), {"--set", "seed=" + std::to_string(seed)});  // the accuracy's chance spread too
  return argv;
}

// One `workbench-cli run` process into `dir` (its stdout to /dev/null); its exit code, -1 when
// it could not start or ended on a signal.
int runOnce(const NoiseOptions& o, const fs::path& dir, uint64_t seed) {
  std::vector<std::string> argv = runArgv(o, dir.string(), seed);
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool finishedOk(const fs::path& dir) {
  auto s = proto::readJsonFile(proto::RunDir{dir}.summary());
  return s.ok() && s->value("status", std::string()) == "ok";
}

// The A/A runs as one Slurm job array; a run that finished ok in an earlier call is kept. A run
// Slurm ended twice (time limit, preemption, a lost node) is named with its reasons, not counted.
Result<std::vector<std::string>> calibrateOnSlurm(const NoiseOptions& o, const Config& base) {
  const fs::path out = fs::absolute(o.out);
  if (auto st = launch::slurm::checkCluster(out, o.exec.sbatch_args); !st.ok()) return st.error();
  std::vector<std::string> dirs;
  std::vector<launch::slurm::ArrayTask> tasks;
  std::vector<size_t> taskRun;  // the run each task is
  for (int i = 1; i <= o.runs; ++i) {
    const fs::path dir = out / ("aa-" + std::to_string(i));
    dirs.push_back(dir.string());
    if (finishedOk(dir)) continue;
    tasks.push_back({runArgv(o, "{run_dir}", base.seed + i - 1), dir});
    taskRun.push_back(static_cast<size_t>(i - 1));
  }
  std::fprintf(stderr, "noise: %zu of %d runs to the cluster as one job array (%zu kept from before)\n", tasks.size(),
               o.runs, o.runs - tasks.size());
  if (tasks.empty()) return dirs;
  launch::slurm::ArrayOptions ao;
  ao.sbatch_args = o.exec.sbatch_args;
  ao.folder = out / "slurm";
  ao.job_name = "workbench-noise";
  ao.stop = &stopFlag();
  auto ends = launch::slurm::runArray(tasks, ao);
  if (!ends.ok()) return ends.error();
  for (size_t k = 0; k < ends->size(); ++k) {
    const auto& e = (*ends)[k];
    std::string slurm;
    for (const auto& w : e.slurm_ended) slurm += "; " + w;
    if (e.state != "COMPLETED")
      return makeError(Errc::Io, "run " + std::to_string(taskRun[k] + 1) + " (" + e.run_dir.string() + ") ended " +
                                     e.state + slurm + ": see its logs/ and " + ao.folder.string() +
                                     "/slurm-*.out; nothing was stored (the same command continues)");
    dirs[taskRun[k]] = e.run_dir.string();
  }
  return dirs;
}

// The A/A runs: their folders, or the exit code that stopped them.
Result<std::vector<std::string>> calibrate(const NoiseOptions& o) {
  auto resolved = resolveConfig(o.experiment);
  if (!resolved.ok()) return resolved.error();
  const Config base = *resolved;
  if (o.exec.slurm()) return calibrateOnSlurm(o, base);
  std::vector<std::string> dirs;
  for (int i = 1; i <= o.runs; ++i) {
    if (stopFlag()) return makeError(Errc::Cancelled, "cancelled after " + std::to_string(i - 1) + " runs");
    const fs::path dir = fs::path(o.out) / ("aa-" + std::to_string(i));
    std::fprintf(stderr, "noise: run %d of %d into %s\n", i, o.runs, dir.string().c_str());
    const int rc = runOnce(o, dir, base.seed + i - 1);
    if (rc != 0)
      return makeError(rc == 2 ? Errc::InvalidConfig : Errc::Io,
                       "run " + std::to_string(i) + " (" + dir.string() + ") exited " + std::to_string(rc) +
                           ": see its logs/; nothing was stored");
    dirs.push_back(dir.string());
  }
  return dirs;
}

// The repeats must be one configuration: a run of another one names itself.
Status checkRepeats(const std::vector<report::RunRecord>& runs) {
  for (const auto& r : runs)
    if (!report::sameConfiguration(runs.front().config, r.config))
      return makeError(Errc::InvalidConfig, r.dir + " is not a repeat of " + runs.front().dir + " (" +
                                                report::describeDiff(report::configDiff(runs.front().config, r.config)) +
                                                "): give runs of one configuration");
  return {};
}

void printNoise(const report::HostNoise& n, const std::optional<report::AccuracySpread>& acc) {
  std::printf("Run-to-run noise of %s (%d cores), %d runs\n", n.machine.host.c_str(), n.machine.cores, n.runs);
  for (const auto& [metric, band] : n.bands)
    if (metric != "host_kernel") std::printf("  %-22s ±%.1f %%\n", metric.c_str(), band * 100.0);
  if (n.hostKernelMeasured())
    std::printf("  host speed check       a change beyond ±%.1f %% withholds a run's speedup (the kernel's own A/A\n"
                "                         spread at a 0.1 %% false-alarm rate per run)\n", n.hostKernelBand() * 100.0);
  if (acc)
    std::printf("  best val acc           sd %.2f points over %d seeds: time to target compares at the baseline's\n"
                "                         best less this\n", acc->sd_pp, acc->runs);
  std::printf("  band used by verdicts  ±%.1f %%\n%s.\n", n.band * 100.0, report::noiseMessage(n).c_str());
}

int noiseCommand(const NoiseOptions& o) {
  installStopSignals();
  std::vector<std::string> dirs = o.from;
  if (dirs.empty()) {
    if (o.out.empty()) {
      std::fprintf(stderr, "workbench-cli noise: give --out DIR for the A/A runs (or --from RUN_DIR... to use existing runs)\n");
      return kExitUsage;
    }
    auto made = calibrate(o);
    if (!made.ok()) {
      std::fprintf(stderr, "workbench-cli noise: %s\n", made.error().message.c_str());
      return exitCodeFor(made.error().code);
    }
    dirs = *made;
  }
  auto runs = report::loadRuns(dirs);
  if (!runs.ok()) {
    std::fprintf(stderr, "workbench-cli noise: %s\n", runs.error().message.c_str());
    return kExitFailed;
  }
  if (auto st = checkRepeats(*runs); !st.ok()) {
    std::fprintf(stderr, "workbench-cli noise: %s\n", st.error().message.c_str());
    return kExitUsage;
  }
  const std::string source = (o.from.empty() ? "A/A calibration: " : "repeats of existing runs: ") +
                             std::to_string(runs->size()) + " runs of " + runs->front().name;
  auto noise = report::noiseFromRepeats(*runs, source);
  if (!noise) {
    std::fprintf(stderr, "workbench-cli noise: fewer than 2 of the runs finished uncontended: no spread to measure\n");
    return 1;
  }
  const auto acc = report::accuracySpreadOfRepeats(*runs, source);
  printNoise(*noise, acc);
  if (o.no_store) return 0;
  if (acc)
    if (auto st = report::saveAccuracySpread(runs->front().config, *acc); !st.ok())
      std::fprintf(stderr, "workbench-cli noise: %s\n", st.error().message.c_str());
  if (auto st = report::saveNoise(*noise); !st.ok()) {
    std::fprintf(stderr, "workbench-cli noise: %s\n", st.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "stored in %s\n", (report::noiseDir() / (report::noiseKey(noise->machine) + ".json")).string().c_str());
  return 0;
}

}  // namespace

void addNoise(CLI::App& cli, Commands& out) {
  auto o = std::make_shared<NoiseOptions>();
  CLI::App* noise = cli.add_subcommand("noise", kAbout);
  addExperimentOptions(*noise, o->experiment, "the configuration to repeat (default: the default run)");
  noise->add_option("--runs", o->runs, "how many A/A runs")->check(inRange(2, 100));
  noise->add_option("--out", o->out, "folder for the A/A runs (aa-1, aa-2, ...)")->type_name("DIR")->check(utf8Path("--out"));
  noise->add_option("--from", o->from, "measure from these existing runs of one configuration instead")
      ->type_name("RUN_DIR")->take_all();
  noise->add_flag("--no-store", o->no_store, "print only; keep the stored band as it is");
  addExecutorOptions(*noise, o->exec);
  out.push_back({noise, [o] { return noiseCommand(*o); }});
}

}  // namespace wb::cli
