#include "slurm_exec.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "commands.h"
#include "command_setup.h"
#include "wb/data/dataset.h"
#include "wb/experiment/reference_runs.h"
#include "wb/experiment/runs_on_slurm.h"
#include "wb/launch/slurm_array.h"
#include "wb/launch/slurm_jobs.h"
#include "wb/proto/cluster_jobs.h"

namespace wb::cli {
namespace fs = std::filesystem;

namespace {

// This process's arguments after the program, less the options that say where it runs and --out.
std::vector<std::string> argumentsForTheJob() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string all((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::string> args;
  for (size_t from = 0; from < all.size();) {
    const size_t to = all.find('\0', from);
    args.push_back(all.substr(from, to - from));
    from = to == std::string::npos ? all.size() : to + 1;
  }
  std::vector<std::string> kept;
  for (size_t i = 1; i < args.size(); ++i) {
    bool dropped = false;
    for (const char* name : {"--executor", "--sbatch-arg", "--out"}) {
      const std::string n = name;
      if (args[i] == n) {
        ++i;  // and its value
        dropped = true;
      } else if (args[i].rfind(n + "=", 0) == 0) {
        dropped = true;
      }
      if (dropped) break;
    }
    if (!dropped) kept.push_back(args[i]);
  }
  return kept;
}

void printJobOutput(const fs::path& folder) {
  std::error_code ec;
  fs::path last;
  for (const auto& f : fs::directory_iterator(folder, ec))
    if (f.path().filename().string().rfind("slurm-", 0) == 0 && (last.empty() || f.path() > last)) last = f.path();
  std::ifstream in(last);
  if (in) std::fputs(std::string((std::istreambuf_iterator<char>(in)), {}).c_str(), stdout);
}

int jobExitCode(const launch::slurm::TaskEnd& e) {
  if (e.state == "COMPLETED") return 0;
  try {
    const int code = std::stoi(e.exit_code.substr(0, e.exit_code.find(':')));
    return code != 0 ? code : 1;
  } catch (const std::exception&) {
    return 1;
  }
}

}  // namespace

int runOnSlurm(const ExecutorOptions& e, const fs::path& out, const std::string& command) {
  const std::string who = "workbench-cli " + command + ": ";
  if (auto st = launch::slurm::checkCluster(out, e.sbatch_args); !st.ok()) {
    std::fprintf(stderr, "%s%s\n", who.c_str(), st.error().message.c_str());
    return exitCodeFor(st.error().code);
  }
  std::vector<std::string> argv{selfPath()};
  for (auto& a : argumentsForTheJob()) argv.push_back(std::move(a));
  argv.insert(argv.end(), {"--out", out.string(), "--executor", ExecutorOptions::kInSlurmJob});
  for (const auto& a : e.sbatch_args) argv.push_back("--sbatch-arg=" + a);
  launch::slurm::ArrayOptions o;
  o.sbatch_args = e.sbatch_args;
  o.sbatch_args.push_back("--nodes=1");  // every pair on one node
  o.folder = out.string() + ".slurm";
  std::error_code ec;
  o.workdir = fs::current_path(ec);  // relative paths in the arguments mean what they mean here
  o.job_name = "workbench-" + command;
  o.rerun_in_fresh_folder = false;  // the command continues its own folder
  o.stop = &stopFlag();
  std::fprintf(stderr, "%s one job on one node of the cluster, writing %s (Slurm's files in %s)\n", who.c_str(),
               out.c_str(), o.folder.c_str());
  auto ends = launch::slurm::runArray({launch::slurm::ArrayTask{argv, out}}, o);
  printJobOutput(o.folder);
  if (!ends.ok()) {
    std::fprintf(stderr, "%s%s\n", who.c_str(), ends.error().message.c_str());
    return exitCodeFor(ends.error().code);
  }
  const auto& end = ends->front();
  if (end.state != "COMPLETED" && end.state != "FAILED") {
    std::string why;
    for (const auto& w : end.slurm_ended) why += (why.empty() ? "" : "; ") + w;
    std::fprintf(stderr, "%sthe job did not finish: %s (Slurm: %s); what it wrote in %s is kept, the same command continues\n",
                 who.c_str(), end.state.c_str(), why.empty() ? end.reason.c_str() : why.c_str(), out.c_str());
    return 1;
  }
  return jobExitCode(end);
}

namespace {

// The reference runs' options as the experiment's job will make them: the dataset's fingerprint
// and training split's size are what the job's math check reads.
Result<experiment::ReferenceOptions> referenceOptionsOf(const Config& baseline, const ByPartsOptions& parts) {
  experiment::ReferenceOptions r;
  r.baseline = baseline;
  const experiment::ComposedOptions c = parts.resolved();
  r.store = c.references, r.runs = c.reference_runs;
  r.dataset_id = data::datasetFingerprint(baseline.data.dataset);  // as the job's math check reads it
  auto splits = data::openSplits(baseline.data, baseline.seed);
  if (!splits.ok()) return splits.error();
  r.train_samples = static_cast<int64_t>(splits->train->size());
  return r;
}

}  // namespace

experiment::ComposedOptions composedFor(const ByPartsOptions& parts, const ExecutorOptions& e) {
  experiment::ComposedOptions c = parts.resolved();
  if (!e.inSlurmJob()) return c;
  c.variant_runs_on = [args = e.sbatch_args](const fs::path& folder) {
    launch::slurm::ArrayOptions a;
    a.sbatch_args = args;
    a.folder = folder;
    a.job_name = "workbench-variant";
    a.stop = &stopFlag();
    return experiment::runManyOnSlurm(a, selfPath());
  };
  return c;
}

int referencesOnSlurm(const ExecutorOptions& e, const Config& baseline, const ByPartsOptions& parts, const std::string& command) {
  const std::string who = "workbench-cli " + command + ": ";
  if (!parts.byParts() || parts.composed.reference_runs <= 0) return 0;
  auto r = referenceOptionsOf(baseline, parts);
  if (!r.ok()) {
    std::fprintf(stderr, "%s%s\n", who.c_str(), r.error().message.c_str());
    return exitCodeFor(r.error().code);
  }
  launch::slurm::ArrayOptions a;
  a.sbatch_args = e.sbatch_args;
  a.folder = r->store / experiment::referenceKey(baseline, r->dataset_id) / proto::kClusterArrayFolder;  // beside runs/
  a.job_name = "workbench-references";
  a.stop = &stopFlag();
  r->run_many = experiment::runManyOnSlurm(a, selfPath());
  installStopSignals();
  std::fprintf(stderr, "%sthe baseline's reference runs first, as one job array (Slurm's files in %s)\n", who.c_str(),
               a.folder.c_str());
  auto refs = experiment::ensureReferenceRuns(*r);
  if (!refs.ok()) {
    std::fprintf(stderr, "%s%s\n", who.c_str(), refs.error().message.c_str());
    return exitCodeFor(refs.error().code);
  }
  std::fprintf(stderr, "%sreference runs in %s: %d kept from before, %d run as the array\n", who.c_str(), refs->dir.c_str(),
               refs->reused, refs->ran);
  return 0;
}

}  // namespace wb::cli
