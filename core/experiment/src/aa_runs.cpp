#include "wb/experiment/aa_runs.h"

#include "wb/common/exit_codes.h"
#include "wb/experiment/paired_runner.h"
#include "wb/proto/run_status.h"
#include "wb/proto/rundir.h"

namespace wb::experiment {
namespace fs = std::filesystem;

namespace {

bool finishedOk(const fs::path& dir) { return proto::RunDir{dir}.summaryStatus() == proto::kStatusOk; }

// aa-<i>, or aa-<i>-r2, ... when aa-<i> holds a run that did not finish ok.
fs::path freshAaDir(const fs::path& out, int i) {
  std::error_code ec;
  fs::path dir = out / ("aa-" + std::to_string(i));
  for (int k = 2; fs::exists(dir, ec) && !fs::is_empty(dir, ec); ++k)
    dir = out / ("aa-" + std::to_string(i) + "-r" + std::to_string(k));
  return dir;
}

Error runError(int i, const fs::path& dir, const std::string& how, Errc code = Errc::Io) {
  return makeError(code, "A/A run " + std::to_string(i) + " (" + dir.string() + ") " + how +
                                     ": see its logs/; nothing was stored (the same command continues, keeping the runs that finished)");
}

// The runs still to make, one after another; each one's folder into dirs.
Status runHere(const AaRunsOptions& o, const std::vector<int>& todo, std::vector<ConfigRun>& runs, std::vector<std::string>& dirs) {
  for (size_t k = 0; k < todo.size(); ++k) {
    if (o.stop && o.stop->load())
      return makeError(Errc::Cancelled, "cancelled with " + std::to_string(todo.size() - k) + " A/A run(s) still to run");
    if (o.log) std::fprintf(o.log, "noise: run %d of %d into %s\n", todo[k], o.runs, runs[k].dir.c_str());
    auto outcome = launchOne(runs[k].config, runs[k].dir, UserCommand{}, o.cli_path, runs[k].who);
    if (!outcome.ok()) return outcome.error();
    if (outcome->status != proto::kStatusOk) {
      if (outcome->exit_code == kExitUsage) return runError(todo[k], runs[k].dir, "refused the configuration", Errc::InvalidConfig);
      return runError(todo[k], runs[k].dir, "ended " + outcome->status);
    }
    dirs[size_t(todo[k] - 1)] = runs[k].dir.string();
  }
  return {};
}

// The runs still to make, handed to o.run_many at once.
Status runElsewhere(const AaRunsOptions& o, const std::vector<int>& todo, const std::vector<ConfigRun>& runs,
                    std::vector<std::string>& dirs) {
  auto ends = o.run_many(runs);
  if (!ends.ok()) return ends.error();
  for (size_t k = 0; k < todo.size() && k < ends->size(); ++k) {
    const ConfigRunEnd& e = (*ends)[k];
    if (!e.problem.empty()) return runError(todo[k], e.dir, e.problem);
    if (e.status != proto::kStatusOk) return runError(todo[k], e.dir, "ended " + e.status);
    dirs[size_t(todo[k] - 1)] = e.dir.string();
  }
  return {};
}

}  // namespace

Result<std::vector<std::string>> runAaCalibration(const AaRunsOptions& o) {
  std::vector<std::string> dirs(size_t(std::max(0, o.runs)));
  std::vector<int> todo;
  std::vector<ConfigRun> runs;
  for (int i = 1; i <= o.runs; ++i) {
    const fs::path kept = o.out / ("aa-" + std::to_string(i));
    if (finishedOk(kept)) {
      dirs[size_t(i - 1)] = kept.string();
      continue;
    }
    Config c = o.config;
    c.seed = o.config.seed + uint64_t(i - 1);  // the accuracy's chance spread too
    todo.push_back(i);
    runs.push_back({c, freshAaDir(o.out, i), "A/A run " + std::to_string(i)});
  }
  if (o.log)
    std::fprintf(o.log, "noise: %zu of %d runs %s (%zu kept from before)\n", todo.size(), o.runs,
                 o.run_many ? "to the cluster as one job array" : "to make here, one after another", o.runs - todo.size());
  if (todo.empty()) return dirs;
  const Status st = o.run_many ? runElsewhere(o, todo, runs, dirs) : runHere(o, todo, runs, dirs);
  if (!st.ok()) return st.error();
  return dirs;
}

}  // namespace wb::experiment
