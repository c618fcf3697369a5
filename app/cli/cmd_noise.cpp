// workbench-cli noise: this machine's run-to-run spread, measured (an A/A calibration: the same
// configuration run N times as whole `workbench-cli run` processes) or read from the repeats of
// existing runs (--from), printed and stored per host (wb/records/noise.h), where compare, export,
// the ladder and the window read the band their verdicts use.
#include <cstdio>
#include <filesystem>

#include "commands.h"
#include "command_setup.h"
#include "wb/common/exit_codes.h"
#include "wb/experiment/aa_runs.h"
#include "wb/experiment/runs_on_slurm.h"
#include "wb/proto/cluster_jobs.h"
#include "wb/compare/compare.h"
#include "wb/compare/noise_of_repeats.h"
#include "wb/records/noise.h"

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
The same command continues: a run that finished ok in <out> is kept (a new --out measures afresh),
one cut or failed runs again in a fresh folder (aa-N-r2), the old one left as it was.
With --executor slurm the runs go to the cluster as one job array (--sbatch-arg passed through):
<out> must be on a filesystem every node sees (a first job checks) and a run Slurm ended is rerun
once.)";

struct NoiseOptions {
  ExperimentOptions experiment;
  int runs = 6;
  std::string out;
  std::vector<std::string> from;
  bool no_store = false;
  ExecutorOptions exec;
};

// The A/A runs: their folders, or the error that stopped them.
Result<std::vector<std::string>> calibrate(const NoiseOptions& o) {
  auto resolved = resolveConfig(o.experiment);
  if (!resolved.ok()) return resolved.error();
  experiment::AaRunsOptions a;
  a.config = *resolved;
  a.out = fs::absolute(o.out);
  a.runs = o.runs;
  a.cli_path = selfPath();
  a.stop = &stopFlag();
  if (o.exec.slurm()) {
    launch::slurm::ArrayOptions array;
    array.sbatch_args = o.exec.sbatch_args;
    array.folder = a.out / proto::kClusterArrayFolder;  // beside the runs: the window finds their jobs
    array.job_name = "workbench-noise";
    array.stop = &stopFlag();
    a.run_many = experiment::runManyOnSlurm(array, a.cli_path);
  }
  return experiment::runAaCalibration(a);
}

// The repeats must be one configuration: a run of another one names itself.
Status checkRepeats(const std::vector<records::RunRecord>& runs) {
  for (const auto& r : runs)
    if (!compare::sameConfiguration(runs.front().config, r.config))
      return makeError(Errc::InvalidConfig, r.dir + " is not a repeat of " + runs.front().dir + " (" +
                                                compare::describeDiff(compare::configDiff(runs.front().config, r.config)) +
                                                "): give runs of one configuration");
  return {};
}

void printNoise(const records::HostNoise& n, const std::optional<records::AccuracySpread>& acc) {
  std::printf("Run-to-run noise of %s (%d cores), %d runs\n", n.machine.host.c_str(), n.machine.cores, n.runs);
  for (const auto& [metric, band] : n.bands)
    if (metric != "host_kernel") std::printf("  %-22s ±%.1f %%\n", metric.c_str(), band * 100.0);
  if (n.hostKernelMeasured())
    std::printf("  host speed check       a change beyond ±%.1f %% withholds a run's speedup (the kernel's own A/A\n"
                "                         spread at a 0.1 %% false-alarm rate per run)\n", n.hostKernelBand() * 100.0);
  if (acc)
    std::printf("  best val acc           sd %.2f points over %d seeds: time to target compares at the baseline's\n"
                "                         best less this\n", acc->sd_pp, acc->runs);
  std::printf("  band used by verdicts  ±%.1f %%\n%s.\n", n.band * 100.0, records::noiseMessage(n).c_str());
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
  auto runs = records::loadRuns(dirs);
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
  auto noise = compare::noiseFromRepeats(*runs, source);
  if (!noise) {
    std::fprintf(stderr,
                 "workbench-cli noise: fewer than 2 of the runs finished uncontended: no spread to measure.\n"
                 "  Not counted: %s.\n  Run the repeats again while nothing else runs on this machine.\n",
                 compare::unusableRepeats(*runs).c_str());
    return 1;
  }
  const auto acc = compare::accuracySpreadOfRepeats(*runs, source);
  printNoise(*noise, acc);
  if (o.no_store) return 0;
  if (acc)
    if (auto st = records::saveAccuracySpread(runs->front().config, *acc); !st.ok())
      std::fprintf(stderr, "workbench-cli noise: %s\n", st.error().message.c_str());
  if (auto st = records::saveNoise(*noise); !st.ok()) {
    std::fprintf(stderr, "workbench-cli noise: %s\n", st.error().message.c_str());
    return 1;
  }
  std::fprintf(stderr, "stored in %s\n", (records::noiseDir() / (records::noiseKey(noise->machine) + ".json")).string().c_str());
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
  addExecutorOptions(*noise, o->exec, false);
  out.push_back({noise, [o] { return noiseCommand(*o); }});
}

}  // namespace wb::cli
