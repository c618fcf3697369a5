#include "slurm_exec.h"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "commands.h"
#include "experiment.h"
#include "wb/launch/slurm_array.h"
#include "wb/launch/slurm_jobs.h"

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
  argv.insert(argv.end(), {"--out", out.string()});
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

}  // namespace wb::cli
