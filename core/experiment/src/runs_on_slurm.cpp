#include "wb/experiment/runs_on_slurm.h"

#include "wb/common/fs.h"
#include "wb/launch/slurm_jobs.h"
#include "wb/proto/config_json.h"
#include "wb/proto/run_status.h"
#include "wb/proto/rundir.h"

namespace wb::experiment {
namespace fs = std::filesystem;

namespace {

ConfigRunEnd endOf(const launch::slurm::TaskEnd& e, const fs::path& logs) {
  const std::string wrote = proto::RunDir{e.run_dir}.summaryStatus();  // none: it failed before its end
  ConfigRunEnd end{e.run_dir, wrote.empty() ? std::string(proto::kStatusFailed) : wrote, ""};
  if (e.finished) return end;
  end.status = proto::kStatusFailed;
  end.problem = "ended " + e.state;
  for (const auto& w : e.slurm_ended) end.problem += "; " + w;
  end.problem += " (Slurm's logs: " + logs.string() + ")";
  return end;
}

// Each run's config written into its folder; the tasks that run them.
Result<std::vector<launch::slurm::ArrayTask>> tasksOf(const std::vector<ConfigRun>& runs, const std::string& cli) {
  std::vector<launch::slurm::ArrayTask> tasks;
  for (size_t i = 0; i < runs.size(); ++i) {
    const fs::path config = runs[i].dir / "config.json";  // the window lists the run while it waits
    std::error_code ec;
    fs::create_directories(runs[i].dir, ec);
    if (auto st = writeFileAtomic(config, proto::configToJson(runs[i].config).dump(2) + "\n"); !st.ok()) return st.error();
    tasks.push_back({{cli, "run", "--config", config.string(), "--run-dir", "{run_dir}"}, runs[i].dir});
  }
  return tasks;
}

}  // namespace

RunMany runManyOnSlurm(launch::slurm::ArrayOptions array, std::string cli_path) {
  return [array = std::move(array), cli = std::move(cli_path)](const std::vector<ConfigRun>& runs) -> Result<std::vector<ConfigRunEnd>> {
    if (auto st = launch::slurm::checkCluster(array.folder, array.sbatch_args); !st.ok()) return st.error();
    std::error_code ec;
    fs::create_directories(array.folder, ec);
    if (ec) return makeError(Errc::Io, "cannot create " + array.folder.string() + ": " + ec.message());
    auto tasks = tasksOf(runs, cli);
    if (!tasks.ok()) return tasks.error();
    auto ends = launch::slurm::runArray(*tasks, array);
    if (!ends.ok()) return ends.error();
    std::vector<ConfigRunEnd> out;
    for (const auto& e : *ends) out.push_back(endOf(e, array.folder));
    return out;
  };
}

}  // namespace wb::experiment
