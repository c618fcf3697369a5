#pragma once
// The launcher: runs one experiment as a set of supervised `workbench-cli worker` processes
// (one per rank) with the torchrun environment, merges their event streams, and writes the run
// directory (config.json, events.jsonl, summary.json, env.json, logs/rank-N.log).
// Qt-free; used by `workbench-cli run` (and so by the GUI through a QProcess) and by `ladder`.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wb/common/config.h"
#include "wb/common/result.h"
#include "wb/common/timeouts.h"
#include "wb/proto/run_summary.h"

namespace wb::launch {

struct LaunchOptions {
  std::string cli_path;          // the workbench-cli binary that runs ranks (default: this process's)
  std::string runs_root;         // where <run-id>/ is created (default: wb::defaultRunsRoot())
  std::string run_dir;           // explicit run folder (overrides runs_root/<run-id>)
  std::string resume_dir;        // continue this run from checkpoints/<resume_from>.pt
  std::string resume_from = "last";  // "last" or "best" (an unreadable last.pt's way back)
  bool overwrite = false;        // a run_dir that holds a finished run: replace it (else refused)
  // With resume_dir: continue its weights on another data.dataset (else refused); the `run`
  // event and the summary then say fine_tuned_from (the dataset they were trained on).
  bool fine_tune = false;
  int collective_timeout_s = kDefaultCollectiveTimeoutS;
  int kill_grace_s = 10;         // SIGTERM -> SIGKILL grace when tearing ranks down
  // Seconds the command had already run when it called launchRun (its own start-up), counted
  // into the summary's run_wall_s and time_to_first_step_s; 0 for a run inside a longer command
  // (a ladder rung).
  double startup_s = 0;
  // Every merged event, in arrival order, on the launcher's thread.
  std::function<void(const nlohmann::json&)> on_event;
};

struct RunOutcome {
  std::string run_dir;
  std::string status;            // ok | failed | cancelled | early-stopped | diverged
  int exit_code = 0;             // the documented CLI exit code for status
  proto::RunSummary summary;     // summary.json's record
};

// What the run got from the machine, from the launcher's view: every rank's CPU time (all their
// threads), against the machine's busy time over the run (/proc/stat). What its own experiment's
// other processes used meanwhile (`sharedCores`: its runs side by side, wb::experimentRoot) is
// not other load: a run that met >= 0.3 cores of it `shared` the cores with them. Whatever else was
// busy is the other load (`busiest` names who took most of it); a run measured while it was >= 0.3
// cores is `contended`. The comparison, the ladder and the advisor report the speedups of neither.
proto::RunCpu runCpu(double ranksCpuSeconds, double launcherWallSeconds, int askedCores, double otherCores,
                     const std::vector<ProcessLoad>& busiest = {}, double sharedCores = 0);

// Blocks until the run ends, holding the run folder's RunLock throughout. The ranks stay in the
// caller's process group (a kill of the group reaches them) and are SIGKILLed if the calling
// thread dies (PR_SET_PDEATHSIG fires on the death of the thread that forked; a rank started warm,
// wb/launch/warm_start.h, is re-parented to the process's main thread and dies with that): call it
// from a thread that outlives the run. A process a rank started and left running when it exited is
// ended (SIGTERM, kill_grace_s, SIGKILL) and named in a warning before the run's end. SIGXFSZ
// is ignored while it runs (a file size limit is an error the run reports); the ranks get the disposition the caller had. Returns an Error only
// when the run could not start (bad config, unwritable runs root, a folder another run holds,
// a folder with a finished run and neither resume_dir nor overwrite, a resume that changes the
// model or, without fine_tune, the dataset: then every file of the folder is as it was); a run that started and failed is a RunOutcome with status "failed".
Result<RunOutcome> launchRun(const Config& config, const LaunchOptions& options);

// Where a new run goes: run_dir when given, else <runs_root or wb::defaultRunsRoot()>/<run id of
// config.name>, absolute.
std::filesystem::path newRunDir(const Config& config, const std::string& runs_root, const std::string& run_dir);

// Asks a running launchRun (from a signal handler or another thread) to stop: ranks get SIGTERM,
// finish their step, write `end` (cancelled).
void requestStop();

}  // namespace wb::launch
